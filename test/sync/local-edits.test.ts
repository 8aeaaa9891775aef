import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { nowIso } from '../../src/db/database.ts';
import { startSyncFollower } from '../../src/sync/starter.ts';
import { beginSnapshot, forgetState } from '../../src/sync/state.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const product = { articleNumber: 'LOCAL-1', name: 'Local', price: '1.00', currency: 'CZK', vatRate: 21 };

for (const dialect of await dialects()) {
  describe(`local edits of a follower (${dialect})`, () => {
    const apps: TestApp[] = [];
    after(() => Promise.all(apps.map((a) => a.close())));

    it('are refused with 409 once the database follows a main store, orders excepted, and allowed again after sync forget', async () => {
      const t = await createTestApp(dialect);
      apps.push(t);
      const watch = await startSyncFollower(t.ctx);
      try {
        assert.equal((await t.admin('POST', '/admin/api/products', product)).statusCode, 201, 'not a follower yet');
        await beginSnapshot(t.ctx.store.db, 'http://main.test', 0, nowIso());
        await watch?.stop();
        const again = await startSyncFollower(t.ctx);
        const refused = await t.admin('POST', '/admin/api/brands', { name: 'Local brand' });
        assert.equal(refused.statusCode, 409);
        assert.equal(refused.json().code, 'conflict');
        assert.match(refused.json().detail, /follows brands from a main store/);
        assert.equal((await t.admin('DELETE', '/admin/api/products/1')).statusCode, 409);
        assert.deepEqual([...t.ctx.followed].sort(), ['brands', 'categories', 'product-filters', 'product-parameters', 'products']);
        await forgetState(t.ctx.store.db);
        await again?.stop();
        await (await startSyncFollower(t.ctx))?.stop();
        assert.equal(t.ctx.followed.size, 0);
      } finally {
        await watch?.stop();
      }
    });

    it('are allowed with SYNC_ALLOW_LOCAL_EDITS=true', async () => {
      const t = await createTestApp(dialect, { env: { SYNC_ALLOW_LOCAL_EDITS: 'true' } });
      apps.push(t);
      await beginSnapshot(t.ctx.store.db, 'http://main.test', 0, nowIso());
      const task = await startSyncFollower(t.ctx);
      try {
        assert.equal(t.ctx.followed.size, 0);
        assert.equal((await t.admin('POST', '/admin/api/products', product)).statusCode, 201);
      } finally {
        await task?.stop();
      }
    });
  });
}
