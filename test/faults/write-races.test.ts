import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

/**
 * A PATCH racing a DELETE of the same item, on every collection: whichever wins, the answers are the
 * contract's (the update, or 404; 204, or 404/409) and the event log stays consistent: no event without
 * data, and nothing about an item after its deletion. On PostgreSQL the pairs truly run at once on separate
 * connections; on SQLite they are serialised by the single writer, which must give the same answers.
 */
const PAIRS = 12;

interface Case {
  collection: string;
  event: string;
  create(i: number): Record<string, unknown>;
  patch: Record<string, unknown>;
}

const address = { name: 'Jan Novák', street: 'Dlouhá 1', city: 'Praha', postalCode: '11000', country: 'CZ' };

for (const dialect of await dialects()) {
  describe(`a write racing a delete (${dialect})`, () => {
    let t: TestApp;
    let run = 0;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 4, orders: 0, seed: 3 } });
      token = (await t.credential(RESOURCES.map((r) => r.scope) as Scope[])).token;
    });
    after(() => t.close());

    const created = async (collection: string, body: Record<string, unknown>): Promise<number> => {
      const res = await t.admin('POST', `/admin/api/${collection}`, body);
      assert.equal(res.statusCode, 201, res.body);
      return Number(res.json().id);
    };
    const exists = async (collection: string, id: number) => (await t.get(`/api/v2/${collection}/${id}`, token)).statusCode === 200;
    const newProduct = (tag: string) => created('products', { articleNumber: `RACE-${tag}`, name: `Race ${tag}`, price: '1.00', currency: 'CZK', vatRate: 21 });

    const cases: Case[] = [
      { collection: 'products', event: 'product', create: (i) => ({ articleNumber: `R-${run}-${i}`, name: `Racer ${i}`, price: '9.90', currency: 'CZK', vatRate: 21 }), patch: { name: 'Renamed racer', stock: 7 } },
      { collection: 'categories', event: 'category', create: (i) => ({ name: `Race shelf ${run}-${i}` }), patch: { name: 'Renamed shelf', position: 2 } },
      { collection: 'brands', event: 'brand', create: (i) => ({ name: `Race brand ${run}-${i}` }), patch: { description: 'Changed while deleted' } },
      { collection: 'orders', event: 'order', create: () => ({ email: 'race@example.com', customerName: 'Racer', currency: 'CZK', billingAddress: address, items: [{ name: 'Gift wrap', quantity: 1, unitPrice: '30.00', vatRate: 21 }] }), patch: { status: 'paid', customerName: 'Paid racer' } },
    ];

    /** Checks the log: every event has data, and no event about an item follows its deletion. */
    async function assertLogConsistent(): Promise<void> {
      const rows = await t.database.store.db.selectFrom('events').select(['seq', 'type', 'resource', 'resource_id', 'data']).orderBy('seq').execute();
      const deletedAt = new Map<string, number>();
      for (const r of rows) {
        assert.ok(r.data !== null && r.data !== 'null', `event ${r.seq} (${r.type}) has no data`);
        const data = JSON.parse(r.data) as { id?: unknown };
        assert.equal(Number(data.id), Number(r.resource_id), `event ${r.seq} (${r.type}) is about another item than its data`);
        const key = `${r.resource}:${r.resource_id}`;
        assert.ok(!deletedAt.has(key), `event ${r.seq} (${r.type}) follows the deletion of ${key} at ${deletedAt.get(key)}`);
        if (r.type.endsWith('.deleted')) deletedAt.set(key, Number(r.seq));
      }
    }

    /** Fires each PATCH and DELETE together and checks both answers and what is left. */
    async function race(collection: string, ids: number[], patch: Record<string, unknown>): Promise<{ updated: number; deleted: number }> {
      const outcomes = await Promise.all(ids.map(async (id) => {
        const [patched, deleted] = await Promise.all([
          t.admin('PATCH', `/admin/api/${collection}/${id}`, patch),
          t.admin('DELETE', `/admin/api/${collection}/${id}`),
        ]);
        assert.ok([200, 404].includes(patched.statusCode), `PATCH ${collection}/${id}: ${patched.statusCode} ${patched.body}`);
        assert.ok([204, 404, 409].includes(deleted.statusCode), `DELETE ${collection}/${id}: ${deleted.statusCode} ${deleted.body}`);
        if (patched.statusCode === 200) assert.equal(Number(patched.json().id), id);
        // The DELETE had the item to itself at some point; it must have removed it.
        if (deleted.statusCode === 204) assert.equal(await exists(collection, id), false, `${collection}/${id} is still there after its DELETE`);
        return { updated: patched.statusCode === 200 ? 1 : 0, deleted: deleted.statusCode === 204 ? 1 : 0 };
      }));
      return outcomes.reduce((a, b) => ({ updated: a.updated + b.updated, deleted: a.deleted + b.deleted }), { updated: 0, deleted: 0 });
    }

    for (const c of cases) {
      it(`${c.collection}: PATCH racing DELETE answers 200/404 and 204/404, never 500`, async () => {
        run++;
        const ids: number[] = [];
        for (let i = 0; i < PAIRS; i++) ids.push(await created(c.collection, c.create(i)));
        const { deleted } = await race(c.collection, ids, c.patch);
        assert.equal(deleted, PAIRS, 'nothing else refers to these items, so every DELETE succeeds');
        await assertLogConsistent();
      });
    }

    for (const [collection, body] of [
      ['product-parameters', (productId: number, i: number) => ({ productId, parameterName: `Race parameter ${i}`, value: String(i) })],
      ['product-filters', (productId: number, i: number) => ({ productId, filterName: `Race filter ${i % 4}`, value: `v${i}` })],
    ] as const) {
      it(`${collection}: PATCH racing DELETE of the value, and of its product`, async () => {
        run++;
        const product = await newProduct(`${collection}-${run}`);
        const ids: number[] = [];
        for (let i = 0; i < PAIRS; i++) ids.push(await created(collection, body(product, i)));
        const { deleted } = await race(collection, ids, { value: 'changed' });
        assert.equal(deleted, PAIRS);

        // The value changes (and touches its product) while the product itself is deleted, taking its values along.
        const products: number[] = [];
        const values: number[] = [];
        for (let i = 0; i < PAIRS; i++) {
          const p = await newProduct(`${collection}-${run}-${i}`);
          products.push(p);
          values.push(await created(collection, body(p, i)));
        }
        await Promise.all(products.map(async (p, i) => {
          const [patched, gone] = await Promise.all([
            t.admin('PATCH', `/admin/api/${collection}/${values[i]}`, { value: 'late' }),
            t.admin('DELETE', `/admin/api/products/${p}`),
          ]);
          assert.ok([200, 404].includes(patched.statusCode), `PATCH ${collection}/${values[i]}: ${patched.statusCode} ${patched.body}`);
          assert.equal(gone.statusCode, 204, gone.body);
          assert.equal(await exists(collection, values[i]), false, `${collection}/${values[i]} outlived its product`);
        }));
        await assertLogConsistent();
      });
    }
  });
}
