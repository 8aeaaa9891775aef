import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pruneEvents } from '../../src/events/feed.ts';
import { readState } from '../../src/sync/state.ts';
import { syncStatus } from '../../src/sync/status.ts';
import { dialects } from '../helpers/databases.ts';
import { closedPort } from '../helpers/ports.ts';
import { assertSameData, followInProcess, listAll, mainHead, newProduct, startInstance, syncOnce, waitCaughtUp, waitFor, type Instance } from './cluster.ts';

for (const dialect of await dialects()) {
  describe(`sync between two stores on loopback (${dialect})`, () => {
    let main: Instance;
    let follower: Instance;

    // Tokens of the main store live 3 s, so the follower must renew them while these tests run.
    before(async () => {
      [main, follower] = await Promise.all([startInstance(dialect, { seed: 120, env: { TOKEN_TTL_SECONDS: '3' } }), startInstance(dialect)]);
    });
    after(async () => {
      await Promise.all([main?.close(), follower?.close()]);
    });

    it('one-shot: copies every followed collection exactly, never orders, and sends its own feed\'s readers to a snapshot', async () => {
      const outcome = await syncOnce(main, follower);
      assert.ok(outcome.snapshot, 'a first sync takes a snapshot');
      const counts = await assertSameData(main, follower);
      assert.equal(counts.products, 120);
      assert.ok(counts['product-parameters'] > 300 && counts['product-filters'] > 200, JSON.stringify(counts));
      assert.equal((await listAll(follower, 'orders')).length, 0, 'orders are never synced');
      assert.ok((await listAll(main, 'orders')).length > 0);

      const state = (await readState(follower.database.store.db))!;
      assert.equal(state.phase, 'following');
      assert.equal(state.cursorSeq, await mainHead(main));
      // A first copy into an empty store records no event per item (docs/sync.md): its own feed starts after
      // the copy, and a reader from before it is sent to a snapshot, which has the rows.
      const own = await follower.database.store.db.selectFrom('events').select(['type']).where('resource', '=', 'product').execute();
      assert.equal(own.length, 0);
      const token = await follower.token();
      const behind = await fetch(`${follower.url}/api/v2/changes?after=0`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(behind.status, 410);
    });

    it('one-shot again: a store already equal writes nothing and records no event', async () => {
      const before = await follower.database.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const outcome = await syncOnce(main, follower);
      assert.equal(outcome.snapshot, null);
      assert.equal(outcome.changes, 0);
      const after = await follower.database.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n));
    });

    it('follows: inserts, updates and deletes on the main store appear within a couple of seconds, through token renewals', async () => {
      const run = followInProcess(main, follower);
      try {
        // One change, timed from the write on the main store to its appearance on the follower's API.
        const patched = await main.admin('PATCH', '/admin/api/products/3', { name: 'Prompt change', price: '1234.50' });
        assert.equal(patched.status, 200);
        const token = await follower.token();
        const lag = await waitFor('the change on the follower', async () => {
          const res = await fetch(`${follower.url}/api/v2/products/3`, { headers: { authorization: `Bearer ${token}` } });
          return ((await res.json()) as { name: string }).name === 'Prompt change';
        }, 5000, 10);
        assert.ok(lag < 2000, `appeared after ${lag} ms`);

        const brand = await main.admin('POST', '/admin/api/brands', { name: 'Synced Brand' });
        assert.equal(brand.status, 201);
        const parent = await main.admin('POST', '/admin/api/categories', { name: 'Synced parent' });
        const child = await main.admin('POST', '/admin/api/categories', { name: 'Synced child', parentId: parent.body.id });
        assert.equal(child.status, 201);
        const created = await main.admin('POST', '/admin/api/products', newProduct(1, { brandId: brand.body.id, categoryId: child.body.id }));
        assert.equal(created.status, 201);
        const productId = Number(created.body.id);
        assert.equal((await main.admin('POST', '/admin/api/product-parameters', { productId, parameterName: 'Sync torque', unit: 'Nm', value: '42' })).status, 201);
        assert.equal((await main.admin('POST', '/admin/api/product-filters', { productId, filterName: 'Sync finish', value: 'matte' })).status, 201);
        // Two products swap article numbers (the unique value passes through a third).
        assert.equal((await main.admin('PATCH', '/admin/api/products/10', { articleNumber: 'SWAP-TMP' })).status, 200);
        assert.equal((await main.admin('PATCH', '/admin/api/products/11', { articleNumber: 'SKU-0000010' })).status, 200);
        assert.equal((await main.admin('PATCH', '/admin/api/products/10', { articleNumber: 'SKU-0000011' })).status, 200);
        assert.equal((await main.admin('DELETE', '/admin/api/products/20')).status, 204);
        const values = await listAll(main, 'product-parameters');
        const value = values.find((v) => v.productId === 21)!;
        assert.equal((await main.admin('DELETE', `/admin/api/product-parameters/${value.id}`)).status, 204);
        assert.equal((await main.admin('PATCH', `/admin/api/categories/${child.body.id}`, { name: 'Synced child, renamed', position: 3 })).status, 200);
        const doomed = await main.admin('POST', '/admin/api/categories', { name: 'Short-lived' });
        assert.equal((await main.admin('DELETE', `/admin/api/categories/${doomed.body.id}`)).status, 204);
        // Longer than a token's life: the follower renews before expiry.
        await new Promise((r) => setTimeout(r, 3500));
        assert.equal((await main.admin('PATCH', '/admin/api/brands/1', { description: 'After the token expired' })).status, 200);

        await waitCaughtUp(main, follower);
        await assertSameData(main, follower);
        const status = await syncStatus(follower.database.store.db);
        assert.equal(status.lagEvents, 0);
        assert.equal(status.lastError, null);
        assert.ok(status.lagSeconds !== null && status.lagSeconds < 2, `lag ${status.lagSeconds}`);
        // The follower assigns no ids of its own to followed rows: a later local insert must not collide.
        const max = await follower.database.store.db.selectFrom('products').select((eb) => eb.fn.max('id').as('m')).executeTakeFirstOrThrow();
        assert.equal(Number(max.m), productId);
      } finally {
        await run.stop();
      }
    });

    it('refuses local edits of followed collections with 409, and serves the status', async () => {
      // serve learns that its database follows a main store when it starts (and every few seconds).
      await follower.stop();
      await follower.restart();
      const res = await follower.admin('POST', '/admin/api/products', newProduct(2));
      assert.equal(res.status, 409);
      assert.match(String(res.body.detail), /follows products from a main store/);
      assert.equal((await follower.admin('PATCH', '/admin/api/brands/1', { name: 'Local' })).status, 409);
      const status = await follower.admin('GET', '/admin/api/sync');
      assert.equal(status.status, 200);
      assert.equal(status.body.source, main.url);
      assert.equal(status.body.phase, 'following');
      assert.equal(status.body.cursor, await mainHead(main));
      const metrics = await fetch(`${follower.url}/admin/api/sync/metrics`, { headers: { authorization: 'Bearer sync-test-admin-0123456789abcdefghijkl' } });
      assert.match(await metrics.text(), /^store_sync_lag_events 0$/m);
    });

    it('keeps following while the main store is stopped and started again', async () => {
      const run = followInProcess(main, follower, { backoff: { baseMs: 50, capMs: 500 } });
      try {
        await main.admin('PATCH', '/admin/api/products/4', { stock: 1 });
        await waitCaughtUp(main, follower);
        await main.stop();
        await waitFor('the follower to notice', async () => (await readState(follower.database.store.db))?.lastError != null, 10_000);
        await main.restart();
        assert.equal((await main.admin('PATCH', '/admin/api/products/4', { stock: 2 })).status, 200);
        await waitCaughtUp(main, follower, 15_000);
        const product = (await listAll(follower, 'products')).find((p) => p.id === 4)!;
        assert.equal(product.stock, 2);
        assert.equal((await readState(follower.database.store.db))?.lastError, null);
      } finally {
        await run.stop();
      }
      await assertSameData(main, follower);
    });

    it('takes a fresh snapshot by itself when the main store pruned past its cursor (410)', async () => {
      assert.equal((await main.admin('PATCH', '/admin/api/products/5', { name: 'While away' })).status, 200);
      assert.equal((await main.admin('DELETE', '/admin/api/products/6')).status, 204);
      await pruneEvents(main.database.store.db, new Date(Date.now() + 60_000).toISOString());
      const before = (await readState(follower.database.store.db))!;
      const outcome = await syncOnce(main, follower);
      assert.ok(outcome.snapshot, 'a snapshot was taken');
      const state = (await readState(follower.database.store.db))!;
      assert.equal(state.snapshots, before.snapshots + 1);
      await assertSameData(main, follower);
    });

    it('a one-shot sync gives up on an unreachable main store with a one-line reason', async () => {
      await assert.rejects(
        syncOnce({ ...main, url: `http://127.0.0.1:${await closedPort()}` }, follower, { backoff: { baseMs: 5, capMs: 10 } }),
        (err: Error) => /ECONNREFUSED|fetch failed/.test(err.message),
      );
    });

    it('refuses a credential without the read scopes it needs, naming them', async () => {
      const narrow = await (await import('../../src/auth/credentials.service.ts')).createCredential(main.database.store.db, main.server.ctx.hashKey, 'narrow', ['changes:read', 'products:read']);
      await assert.rejects(
        syncOnce(main, follower, { clientId: narrow.clientId, clientSecret: narrow.clientSecret }),
        (err: Error) => /lacks scopes.*categories:read/.test(err.message),
      );
    });
  });
}
