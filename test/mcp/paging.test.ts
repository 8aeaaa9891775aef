import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { callOk, connect, listen } from './client.ts';

const PRODUCTS = 237;

interface Page {
  data: Array<{ id: number }>;
  pagination: { nextCursor: string | null; hasMore: boolean };
}

for (const dialect of await dialects()) {
  describe(`paging through products by tool calls (${dialect})`, () => {
    let t: TestApp;
    let client: Client;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: PRODUCTS, seed: 7 } });
      client = await connect(await listen(t), (await t.credential(['products:read'])).token);
    });
    after(async () => {
      await client.close();
      await t.close();
    });

    /** Follows nextCursor (with the page size; the filters and sort travel in the cursor) until hasMore is false; every id seen, in order. */
    async function walk(first: Record<string, unknown>): Promise<{ ids: number[]; calls: number }> {
      const ids: number[] = [];
      let calls = 0;
      let page = (await callOk(client, 'list_products', first)) as unknown as Page;
      for (;;) {
        calls++;
        ids.push(...page.data.map((p) => p.id));
        if (!page.pagination.hasMore) {
          assert.equal(page.pagination.nextCursor, null);
          return { ids, calls };
        }
        page = (await callOk(client, 'list_products', { cursor: page.pagination.nextCursor, ...(first.limit ? { limit: first.limit } : {}) })) as unknown as Page;
      }
    }

    it('sees every product exactly once, at the largest page a model may ask for and at the default one', async () => {
      const all = await t.database.store.db.selectFrom('products').select('id').orderBy('id').execute();
      assert.equal(all.length, PRODUCTS);
      for (const [args, pages] of [[{ limit: 100 }, 3], [{}, Math.ceil(PRODUCTS / 20)]] as const) {
        const { ids, calls } = await walk(args);
        assert.equal(calls, pages);
        assert.equal(new Set(ids).size, ids.length, 'no product twice');
        assert.deepEqual(ids, all.map((r) => Number(r.id)), 'every product, in id order');
      }
    });

    it('the same with a filter and a descending sort on a field with ties: the cursor carries both', async () => {
      const expected = (await t.database.store.db.selectFrom('products').select('id').where('status', '=', 'active').execute()).map((r) => Number(r.id));
      const { ids } = await walk({ status: 'active', sort: '-updatedAt', limit: 17 });
      assert.equal(new Set(ids).size, ids.length);
      assert.deepEqual([...ids].sort((a, b) => a - b), expected.sort((a, b) => a - b));
    });
  });
}
