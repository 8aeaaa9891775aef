import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

/**
 * API.md §3: keyset pagination "stays stable while data changes: no item present throughout is skipped or
 * repeated because others were inserted, updated or deleted". Each walk below pages through products while
 * the admin API inserts, updates and deletes others, both between pages and concurrently with them.
 */
for (const dialect of await dialects()) {
  describe(`pagination under concurrent writes (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let serial = 0;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 120, seed: 1 } });
      token = (await t.credential(['products:read'])).token;
    });
    after(() => t.close());

    const productIds = async () => (await t.database.store.db.selectFrom('products').select('id').orderBy('id').execute()).map((r) => Number(r.id));

    const insert = async (): Promise<number> => {
      serial++;
      const res = await t.admin('POST', '/admin/api/products', { articleNumber: `CHURN-${dialect}-${serial}`, name: `Churn ${serial}`, price: '1.00', currency: 'CZK', vatRate: 21 });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as number;
    };
    const remove = async (id: number) => {
      const res = await t.admin('DELETE', `/admin/api/products/${id}`);
      assert.equal(res.statusCode, 204, res.body);
    };
    const touch = async (id: number) => {
      const res = await t.admin('PATCH', `/admin/api/products/${id}`, { stock: 1000 + serial++ });
      assert.equal(res.statusCode, 200, res.body);
    };

    for (const sort of ['id', '-id', 'updatedAt', '-updatedAt']) {
      it(`sort=${sort}: every product present throughout is seen exactly once`, async () => {
        const initial = await productIds();
        // Every fourth product may be deleted or updated; the others must stay untouched.
        const churn = initial.filter((_, i) => i % 4 === 1);
        const untouched = new Set(initial.filter((id) => !churn.includes(id)));
        const deleted = new Set<number>();
        const inserted = new Set<number>();
        const pending = [...churn];
        const takeVictim = (pick: (list: number[]) => number) => {
          if (pending.length === 0) return undefined;
          const id = pick(pending);
          pending.splice(pending.indexOf(id), 1);
          return id;
        };

        let walking = true;
        const seen: number[] = [];
        const walk = (async () => {
          let next: string | null = `/api/v2/products?sort=${sort}&limit=7`;
          while (next) {
            const res = await t.get(next, token);
            assert.equal(res.statusCode, 200, res.body);
            const page = res.json();
            seen.push(...page.data.map((p: { id: number }) => p.id));
            // Between pages: delete a churn item already served and one not yet served, update one, insert one.
            const servedVictim = takeVictim((list) => list.find((id) => seen.includes(id)) ?? list[0]);
            if (servedVictim !== undefined) {
              await remove(servedVictim);
              deleted.add(servedVictim);
            }
            const aheadVictim = takeVictim((list) => list.find((id) => !seen.includes(id)) ?? list[0]);
            if (aheadVictim !== undefined) await touch(aheadVictim);
            inserted.add(await insert());
            next = page.pagination.nextCursor ? `/api/v2/products?cursor=${page.pagination.nextCursor}&limit=7` : null;
          }
          walking = false;
        })();
        // Meanwhile another client keeps writing.
        const writer = (async () => {
          while (walking) {
            inserted.add(await insert());
            const victim = takeVictim((list) => list[Math.floor(list.length / 2)]);
            if (victim !== undefined) {
              await remove(victim);
              deleted.add(victim);
            }
            await new Promise((r) => setImmediate(r));
          }
        })();
        await Promise.all([walk, writer]);

        assert.ok(deleted.size >= 10 && inserted.size >= 10, `the walk ran beside real churn (${deleted.size} deleted, ${inserted.size} inserted)`);
        const counts = new Map<number, number>();
        for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1);
        for (const id of untouched) assert.equal(counts.get(id), 1, `product ${id}, present throughout, was seen ${counts.get(id) ?? 0} times`);
        for (const id of seen) assert.ok(initial.includes(id) || inserted.has(id), `product ${id} came from nowhere`);
        if (sort === 'id' || sort === '-id') {
          // With sort by id no item moves, so nothing at all is repeated.
          assert.equal(new Set(seen).size, seen.length);
          const order = [...seen];
          assert.deepEqual(order, [...order].sort((a, b) => (sort === 'id' ? a - b : b - a)));
        }
      });
    }
  });
}
