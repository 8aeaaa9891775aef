import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createCredential, rotateSecret, updateCredential } from '../../src/auth/credentials.service.ts';
import type { Store } from '../../src/db/database.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

class Rollback extends Error {}

for (const dialect of await dialects()) {
  describe(`disabling, re-scoping or rotating a credential and deleting its tokens are one transaction (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    const withTokens = async (name: string) => {
      const c = await createCredential(t.database.store.db, t.ctx.hashKey, name, ['products:read', 'brands:read']);
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret } });
        assert.equal(res.statusCode, 200, res.body);
      }
      return c;
    };
    const state = async (store: Store, id: number) => ({
      credential: await store.db.selectFrom('credentials').select(['enabled', 'scopes', 'secret_hash']).where('id', '=', id).executeTakeFirstOrThrow(),
      tokens: Number((await store.db.selectFrom('tokens').select((eb) => eb.fn.countAll().as('n')).where('credential_id', '=', id).executeTakeFirstOrThrow()).n),
    });

    it('inside a caller\'s transaction that rolls back, neither the change nor the revocation happens', async () => {
      const c = await withTokens('rolled back');
      const before = await state(t.database.store, c.id);
      for (const change of [
        (trx: Parameters<typeof updateCredential>[0]) => updateCredential(trx, c.id, { enabled: false }),
        (trx: Parameters<typeof updateCredential>[0]) => updateCredential(trx, c.id, { scopes: ['brands:read'] }),
        (trx: Parameters<typeof updateCredential>[0]) => rotateSecret(trx, t.ctx.hashKey, c.id),
      ]) {
        await assert.rejects(t.database.store.db.transaction().execute(async (trx) => {
          await change(trx);
          throw new Rollback();
        }), Rollback);
        assert.deepEqual(await state(t.database.store, c.id), before);
      }
      await updateCredential(t.database.store.db, c.id, { enabled: false });
      assert.deepEqual(await state(t.database.store, c.id), { credential: { ...before.credential, enabled: 0 }, tokens: 0 });
    });

    if (dialect === 'postgres') {
      it('another connection never sees the credential disabled while its tokens are still there', async () => {
        const c = await withTokens('watched');
        // A second node holds the credential's token rows, so the revocation has to wait for it.
        const other = t.database.open();
        const held = await other.db.startTransaction().execute();
        let change: Promise<unknown> | undefined;
        try {
          await held.selectFrom('tokens').select('token_hash').where('credential_id', '=', c.id).forUpdate().execute();
          change = updateCredential(t.database.store.db, c.id, { enabled: false });
          // Wait (bounded) until the change is blocked on those rows.
          const blocked = async () => Number((await other.pgPool!.query(
            'select count(*) as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()',
          )).rows[0].n);
          for (let i = 0; i < 200 && (await blocked()) === 0; i++) await sleep(25);
          assert.ok((await blocked()) > 0, 'the revocation waits for the held rows');
          // Meanwhile, from outside: the credential is as it was, and so are its tokens.
          const meanwhile = await state(other, c.id);
          assert.equal(meanwhile.credential.enabled, 1, 'not disabled before its tokens are gone');
          assert.equal(meanwhile.tokens, 2);
          await held.rollback().execute();
          await change;
          const done = await state(other, c.id);
          assert.equal(done.credential.enabled, 0);
          assert.equal(done.tokens, 0);
        } finally {
          if (!held.isCommitted && !held.isRolledBack) await held.rollback().execute();
          await change?.catch(() => {});
          await other.close();
        }
      });
    }
  });
}
