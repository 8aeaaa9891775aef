import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { syncStatus } from '../../src/sync/status.ts';
import { dialects } from '../helpers/databases.ts';
import { assertSameData, newProduct, startInstance, waitCaughtUp, waitFor, type Instance } from './cluster.ts';

for (const dialect of await dialects()) {
  describe(`a chain main → A → B, each follower inside serve with SYNC_FROM (${dialect})`, () => {
    let main: Instance;
    let a: Instance;
    let b: Instance;

    before(async () => {
      main = await startInstance(dialect, { seed: 80 });
      a = await startInstance(dialect, { env: { SYNC_FROM: main.url, SYNC_CLIENT_ID: main.follower.clientId, SYNC_CLIENT_SECRET: main.follower.clientSecret } });
      // B starts while A may still be copying: it follows whatever A records, snapshot writes included.
      b = await startInstance(dialect, { env: { SYNC_FROM: a.url, SYNC_CLIENT_ID: a.follower.clientId, SYNC_CLIENT_SECRET: a.follower.clientSecret } });
    });
    after(async () => {
      // Followers first, so that none of them is left retrying a store that is gone.
      await b?.close();
      await a?.close();
      await main?.close();
    });

    it('copies the main store to the end of the chain, keeping the main store\'s ids', async () => {
      await waitCaughtUp(main, a, 30_000);
      await waitCaughtUp(a, b, 30_000);
      const counts = await assertSameData(main, b);
      assert.equal(counts.products, 80);
      await assertSameData(main, a);
    });

    it('carries changes of the main store down the chain within a couple of seconds', async () => {
      const created = await main.admin('POST', '/admin/api/products', newProduct(1));
      assert.equal(created.status, 201);
      const token = await b.token();
      const lag = await waitFor('the new product at the end of the chain', async () => {
        const res = await fetch(`${b.url}/api/v2/products/${created.body.id}`, { headers: { authorization: `Bearer ${token}` } });
        return res.status === 200;
      }, 10_000, 10);
      assert.ok(lag < 2000, `reached B after ${lag} ms`);

      assert.equal((await main.admin('POST', '/admin/api/product-filters', { productId: created.body.id, filterName: 'Chain colour', value: 'teal' })).status, 201);
      assert.equal((await main.admin('PATCH', '/admin/api/categories/2', { name: 'Renamed down the chain' })).status, 200);
      assert.equal((await main.admin('DELETE', '/admin/api/products/9')).status, 204);
      await waitCaughtUp(main, a);
      await waitCaughtUp(a, b);
      await assertSameData(main, b);
      assert.equal((await syncStatus(b.database.store.db)).source, a.url);
      // Both followers refuse local edits (serve with SYNC_FROM marks the followed collections).
      assert.equal((await a.admin('DELETE', '/admin/api/products/10')).status, 409);
      assert.equal((await b.admin('PATCH', '/admin/api/categories/2', { name: 'x' })).status, 409);
    });
  });
}
