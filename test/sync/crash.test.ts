import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { readState } from '../../src/sync/state.ts';
import { dialects } from '../helpers/databases.ts';
import { assertSameData, followAsChild, mainHead, newProduct, startInstance, waitCaughtUp, waitFor, type Instance } from './cluster.ts';

const BURST = 600;

for (const dialect of await dialects()) {
  describe(`a follower killed with SIGKILL in a burst of ${BURST} changes (${dialect})`, () => {
    let main: Instance;
    let follower: Instance;
    let child: ChildProcess | undefined;
    let stderr = '';

    const spawnFollower = () => {
      child = followAsChild(main, follower);
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      return child;
    };

    before(async () => {
      [main, follower] = await Promise.all([startInstance(dialect, { seed: 60 }), startInstance(dialect)]);
    });
    after(async () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await Promise.all([main?.close(), follower?.close()]);
    });

    it('resumes after the kill and converges, with nothing lost or applied twice', async () => {
      spawnFollower();
      await waitCaughtUp(main, follower, 30_000);
      const start = (await readState(follower.database.store.db))!;
      const firstSeq = start.cursorSeq;

      // The burst: updates, inserts (with values) and deletes, one write each, from four writers as fast as the main store takes them.
      // Parameters exist before the writers race, so that none of them creates one.
      for (let p = 0; p < 7; p++) assert.equal((await main.admin('POST', '/admin/api/product-parameters', { productId: 60, parameterName: `Burst ${p}`, value: 'x' })).status, 201);
      let sent = 0;
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < BURST; i = next++) {
          const kind = i % 6;
          let res;
          if (kind === 0) res = await main.admin('POST', '/admin/api/products', newProduct(10_000 + i));
          else if (kind === 1) res = await main.admin('POST', '/admin/api/product-parameters', { productId: 51 + (i % 10), parameterName: `Burst ${i % 7}`, value: String(i) }).then((r) => (r.status === 409 ? { status: 201 } : r));
          else if (kind === 5 && i % 12 === 5) res = await main.admin('DELETE', `/admin/api/products/${i / 12 + 1 | 0}`).then((r) => (r.status === 404 ? { status: 204 } : r));
          else res = await main.admin('PATCH', `/admin/api/products/${51 + (i % 10)}`, { stock: i, name: `Burst name ${i}` });
          assert.ok(res.status < 300, `change ${i}: ${res.status}`);
          sent++;
        }
      };
      const burst = Promise.all([lane(), lane(), lane(), lane()]);

      // Killed while it applies: once it has taken part of the burst but not all of it.
      await waitFor('the follower to apply part of the burst', async () => ((await readState(follower.database.store.db))?.cursorSeq ?? 0) > firstSeq + 50, 30_000, 5);
      child!.kill('SIGKILL');
      await once(child!, 'exit');
      const atKill = (await readState(follower.database.store.db))!.cursorSeq;
      const sentAtKill = sent;

      await burst;
      spawnFollower();
      await waitCaughtUp(main, follower, 60_000);
      child!.kill('SIGTERM');
      await once(child!, 'exit');
      assert.ok(atKill < (await mainHead(main)), `the follower had events left to apply after the kill (killed with ${sentAtKill} of ${BURST} changes sent)`);

      await assertSameData(main, follower);
      // Nothing doubled: every main-store event after the snapshot was counted exactly once, in the same transactions as its changes.
      const end = (await readState(follower.database.store.db))!;
      const visible = await main.database.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('seq', '>', start.snapshotHead!).where('resource', '!=', 'order').executeTakeFirstOrThrow();
      assert.equal(end.appliedEvents, Number(visible.n));
      assert.equal(end.snapshots, 1, 'resumed from its cursor, no new snapshot');
      // And the follower's own log never records the same state of an item twice in a row.
      const own = await follower.database.store.db.selectFrom('events').select(['resource', 'resource_id', 'type', 'data']).orderBy('seq').execute();
      const last = new Map<string, string>();
      for (const e of own) {
        const key = `${e.resource}:${e.resource_id}`;
        assert.notEqual(last.get(key), `${e.type}${e.data}`, `${key} recorded twice in a row`);
        last.set(key, `${e.type}${e.data}`);
      }
      assert.doesNotMatch(stderr, /"level":50/, 'no error was logged');
    });
  });
}
