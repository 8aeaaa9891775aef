import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nowIso } from '../../src/db/database.ts';
import { getOne } from '../../src/listing/engine.ts';
import { products } from '../../src/modules/products/resource.ts';
import { inTransaction } from '../../src/events/transaction.ts';
import { appRegistry } from '../../src/modules/registry.ts';
import { createItem } from '../../src/resources/writer.ts';
import { addDelete, addUpsert, applyChangeSet, changeSetOfEvents, emptyChangeSet, type ApplyResult, type ChangeSet } from '../../src/sync/apply.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const at = '2026-01-02T03:04:05.678Z';
const brand = (id: number, name = `Brand ${id}`) => ({ id, name, slug: `brand-${id}`, description: null, website: null, createdAt: at, updatedAt: at });
const category = (id: number, parentId: number | null) => ({ id, parentId, name: `Category ${id}`, slug: `category-${id}`, position: 0, createdAt: at, updatedAt: at });
const product = (id: number, extra: Record<string, unknown> = {}) => ({
  id, articleNumber: `A-${id}`, name: `Product ${id}`, description: null, status: 'active', brandId: null, categoryId: null, ean: null,
  price: '10.00', currency: 'CZK', vatRate: 21, stock: 1, weight: null, url: null, createdAt: at, updatedAt: at, ...extra,
});
const parameterValue = (id: number, productId: number, parameterId: number, value: string) => ({ id, productId, parameterId, parameterName: `Param ${parameterId}`, value, unit: 'mm', createdAt: at, updatedAt: at });
const filterValue = (id: number, productId: number, filterId: number, valueId: number, value: string) => ({ id, productId, filterId, filterName: `Filter ${filterId}`, valueId, value, createdAt: at, updatedAt: at });

function set(build: (s: ChangeSet) => void): ChangeSet {
  const s = emptyChangeSet();
  build(s);
  return s;
}

for (const dialect of await dialects()) {
  describe(`applying changes of a main store (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
    });
    after(() => db?.drop());

    const apply = (s: ChangeSet): Promise<ApplyResult> => db.store.db.transaction().execute((trx) => applyChangeSet({ trx, dialect, now: nowIso() }, s));
    const events = async (afterSeq: number) =>
      (await db.store.db.selectFrom('events').select(['seq', 'type', 'resource_id', 'data']).where('seq', '>', afterSeq).orderBy('seq').execute())
        .map((e) => ({ type: e.type, id: Number(e.resource_id), data: JSON.parse(e.data) as Record<string, unknown> }));
    const head = async () => Number((await db.store.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m ?? 0);

    it('writes items with the main store\'s ids, definitions included, and records its own events as its API shows them', async () => {
      const result = await apply(set((s) => {
        addUpsert(s, 'product-filters', filterValue(7, 100, 3, 30, 'red'));
        addUpsert(s, 'product-parameters', parameterValue(5, 100, 2, '12'));
        addUpsert(s, 'products', product(100, { brandId: 40, categoryId: 61, price: '1299.5' }));
        addUpsert(s, 'categories', category(61, 60));
        addUpsert(s, 'categories', category(60, null));
        addUpsert(s, 'brands', brand(40));
      }));
      assert.deepEqual(result, { changed: 6, deferred: 0 });
      const p = await getOne(db.store.db, products, 100);
      assert.equal(p?.price, '1299.50');
      assert.equal(p?.brandId, 40);
      const param = await db.store.db.selectFrom('parameters').selectAll().where('id', '=', 2).executeTakeFirstOrThrow();
      assert.deepEqual([param.name, param.unit], ['Param 2', 'mm']);
      const fv = await db.store.db.selectFrom('filter_values').selectAll().where('id', '=', 30).executeTakeFirstOrThrow();
      assert.deepEqual([Number(fv.filter_id), fv.value], [3, 'red']);
      const own = await events(0);
      // Referenced before referencing, parents before children: a follower of this store can apply them in order.
      assert.deepEqual(own.map((e) => `${e.type}:${e.id}`), ['brand.created:40', 'category.created:60', 'category.created:61', 'product.created:100', 'product-parameter.created:5', 'product-filter.created:7']);
      assert.deepEqual(own[3].data, p);
    });

    it('applying the same changes again writes nothing and records nothing', async () => {
      const seq = await head();
      const again = await apply(set((s) => {
        addUpsert(s, 'brands', brand(40));
        addUpsert(s, 'products', product(100, { brandId: 40, categoryId: 61, price: '1299.50' }));
        addUpsert(s, 'product-parameters', parameterValue(5, 100, 2, '12'));
        addDelete(s, 'products', 999);
      }));
      assert.deepEqual(again, { changed: 0, deferred: 0 });
      assert.equal(await head(), seq);
    });

    it('lets a unique value change hands within one batch (two products swap article numbers)', async () => {
      await apply(set((s) => addUpsert(s, 'products', product(101))));
      const seq = await head();
      const result = await apply(set((s) => {
        addUpsert(s, 'products', product(100, { articleNumber: 'A-101', brandId: 40, categoryId: 61, price: '1299.50' }));
        addUpsert(s, 'products', product(101, { articleNumber: 'A-100' }));
      }));
      assert.equal(result.changed, 2);
      assert.equal((await getOne(db.store.db, products, 100))?.articleNumber, 'A-101');
      assert.equal((await getOne(db.store.db, products, 101))?.articleNumber, 'A-100');
      assert.deepEqual((await events(seq)).map((e) => e.type), ['product.updated', 'product.updated']);
    });

    it('moves a stale holder of a unique value aside until its own change arrives', async () => {
      // A state from later in the feed already holds the value that an earlier state of another product wants.
      await apply(set((s) => addUpsert(s, 'products', product(102, { articleNumber: 'A-taken' }))));
      await apply(set((s) => addUpsert(s, 'products', product(103, { articleNumber: 'A-taken' }))));
      assert.equal((await getOne(db.store.db, products, 102))?.articleNumber, 'A-taken~moved-102');
      await apply(set((s) => addUpsert(s, 'products', product(102, { articleNumber: 'A-own' }))));
      assert.equal((await getOne(db.store.db, products, 102))?.articleNumber, 'A-own');
    });

    it('leaves an item whose reference does not exist yet for the change that brings it', async () => {
      const result = await apply(set((s) => {
        addUpsert(s, 'products', product(104, { brandId: 41 }));
        addUpsert(s, 'product-parameters', parameterValue(6, 104, 2, '1'));
        addUpsert(s, 'categories', category(63, 62));
      }));
      assert.deepEqual(result, { changed: 0, deferred: 3 });
      assert.equal(await getOne(db.store.db, products, 104), undefined);
    });

    it('replaces a value that holds the same product and parameter under another id', async () => {
      const seq = await head();
      await apply(set((s) => addUpsert(s, 'product-parameters', parameterValue(8, 100, 2, '13'))));
      const rows = await db.store.db.selectFrom('product_parameters').select(['id', 'value']).where('product_id', '=', 100).execute();
      assert.deepEqual(rows.map((r) => [Number(r.id), r.value]), [[8, '13']]);
      assert.deepEqual((await events(seq)).map((e) => `${e.type}:${e.id}`), ['product-parameter.created:8', 'product-parameter.deleted:5']);
    });

    it('deletes a product with its values, and clears references to a deleted brand or category', async () => {
      const seq = await head();
      await apply(set((s) => {
        addDelete(s, 'products', 100);
        addDelete(s, 'brands', 40);
      }));
      assert.equal(await getOne(db.store.db, products, 100), undefined);
      assert.equal((await db.store.db.selectFrom('product_filters').select('id').where('product_id', '=', 100).execute()).length, 0);
      assert.deepEqual((await events(seq)).map((e) => `${e.type}:${e.id}`), ['product-filter.deleted:7', 'product-parameter.deleted:8', 'product.deleted:100', 'brand.deleted:40']);
      await apply(set((s) => addUpsert(s, 'products', product(105, { categoryId: 61 }))));
      const before = await head();
      await apply(set((s) => addDelete(s, 'categories', 61)));
      assert.equal((await getOne(db.store.db, products, 105))?.categoryId, null);
      assert.deepEqual((await events(before)).map((e) => `${e.type}:${e.id}`), ['product.updated:105', 'category.deleted:61']);
    });

    it('collapses several events of one item into its last state, and ignores what it does not follow', () => {
      const { set: s, ignored } = changeSetOfEvents([
        { seq: 1, type: 'product.created', resource: 'product', resourceId: 9, occurredAt: at, data: product(9) },
        { seq: 2, type: 'product.updated', resource: 'product', resourceId: 9, occurredAt: at, data: product(9, { stock: 5 }) },
        { seq: 3, type: 'order.created', resource: 'order', resourceId: 1, occurredAt: at, data: { id: 1 } },
        { seq: 4, type: 'order.status_changed', resource: 'order', resourceId: 1, occurredAt: at, data: { id: 1 } },
        { seq: 5, type: 'brand.created', resource: 'brand', resourceId: 3, occurredAt: at, data: brand(3) },
        { seq: 6, type: 'brand.deleted', resource: 'brand', resourceId: 3, occurredAt: at, data: { id: 3 } },
      ]);
      assert.equal(ignored, 2);
      assert.equal(s.upserts.get('products')?.get(9)?.stock, 5);
      assert.equal(s.upserts.get('brands')?.size, 0);
      assert.deepEqual([...(s.deletes.get('brands') ?? [])], [3]);
    });

    it('moves the id sequence past the main store\'s ids, so a local insert does not collide', async () => {
      await apply(set((s) => addUpsert(s, 'products', product(5000))));
      const local = await inTransaction(db.store, undefined, (w) => createItem(w, appRegistry(), products, { articleNumber: 'LOCAL-1', name: 'Local', price: '1.00', currency: 'CZK', vatRate: 21 }));
      assert.equal(local.id, 5001);
    });
  });
}
