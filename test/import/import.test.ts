import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/db/database.ts';
import { ImportFailed, importFile } from '../../src/import/import.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-api-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function file(name: string, text: string): string {
  // Each file in a folder of its own, so that its name can say what it holds.
  const folder = join(dir, String(++fileCount));
  mkdirSync(folder);
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}
const jsonl = (records: unknown[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

async function eventsAfter(store: Store, seq: number) {
  return store.db.selectFrom('events').select(['seq', 'type', 'resource_id', 'data']).where('seq', '>', seq).orderBy('seq').execute();
}
async function head(store: Store): Promise<number> {
  const row = await store.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
  return Number(row?.seq ?? 0);
}
const product = (articleNumber: string, extra: Record<string, unknown> = {}) => ({ articleNumber, name: `Item ${articleNumber}`, price: '10.00', currency: 'CZK', vatRate: 21, ...extra });

for (const dialect of await dialects()) {
  describe(`store-api import (${dialect})`, () => {
    let db: TestDatabase;
    let store: Store;
    let brandId: number;

    before(async () => {
      db = await createTestDatabase(dialect);
      store = db.store;
      await seedStore(store, { products: 5, orders: 2, seed: 7 });
      brandId = Number((await store.db.selectFrom('brands').select('id').orderBy('id').executeTakeFirstOrThrow()).id);
    });
    after(() => db.drop());

    it('creates products from JSON Lines through the write path, recording one event each', async () => {
      const start = await head(store);
      const path = file('products.jsonl', jsonl([product('IMP-1', { brandId, stock: 3 }), '', product('IMP-2', { description: null })]));
      const result = await importFile(store, path);
      assert.deepEqual(result, { resource: 'products', format: 'jsonl', records: 2, created: 2, updated: 0, unchanged: 0, events: 2 });
      const rows = await store.db.selectFrom('products').select(['id', 'article_number', 'brand_id', 'stock', 'status', 'price']).where('article_number', 'in', ['IMP-1', 'IMP-2']).orderBy('article_number').execute();
      assert.deepEqual(rows.map((r) => [r.article_number, r.brand_id === null ? null : Number(r.brand_id), Number(r.stock), r.status, String(r.price)]), [['IMP-1', brandId, 3, 'active', '10.00'], ['IMP-2', null, 0, 'active', '10.00']]);
      const events = await eventsAfter(store, start);
      assert.deepEqual(events.map((e) => [e.type, Number(e.resource_id)]), rows.map((r) => ['product.created', Number(r.id)]));
      assert.equal(JSON.parse(events[0].data).articleNumber, 'IMP-1');
    });

    it('reads CSV (types from the schema, empty nullable cells as null) and upserts by natural key', async () => {
      const existing = await store.db.selectFrom('products').select(['id', 'article_number']).orderBy('id').executeTakeFirstOrThrow();
      const start = await head(store);
      const path = file('products-export.csv', [
        'id,articleNumber,name,price,currency,vatRate,stock,weight,ean,createdAt',
        `,${existing.article_number},"Renamed, with a comma",1299.5,CZK,21,7,,,2020-01-01T00:00:00.000Z`,
        ',CSV-1,"Two\nlines",5,EUR,10.5,2,1.25,,',
      ].join('\r\n'));
      const result = await importFile(store, path);
      assert.equal(result.resource, 'products');
      assert.equal(result.format, 'csv');
      assert.deepEqual([result.created, result.updated, result.unchanged], [1, 1, 0]);
      const updated = await store.db.selectFrom('products').selectAll().where('id', '=', existing.id).executeTakeFirstOrThrow();
      assert.equal(updated.name, 'Renamed, with a comma');
      assert.equal(String(updated.price), '1299.50');
      assert.equal(Number(updated.stock), 7);
      assert.equal(updated.weight, null);
      assert.equal(updated.ean, null);
      const created = await store.db.selectFrom('products').selectAll().where('article_number', '=', 'CSV-1').executeTakeFirstOrThrow();
      assert.equal(created.name, 'Two\nlines');
      assert.equal(Number(created.vat_rate), 10.5);
      assert.equal(Number(created.weight), 1.25);
      assert.deepEqual((await eventsAfter(store, start)).map((e) => e.type), ['product.updated', 'product.created']);
      // The same file again changes nothing and records nothing.
      const again = await importFile(store, path);
      assert.deepEqual([again.created, again.updated, again.unchanged, again.events], [0, 0, 2, 0]);
    });

    it('updates by id, creates with a given id, and keeps ids flowing after it', async () => {
      const target = await store.db.selectFrom('products').select(['id']).orderBy('id').executeTakeFirstOrThrow();
      const path = file('items.ndjson', jsonl([{ id: Number(target.id), name: 'By id', stock: 11 }, { ...product('IMP-ID'), id: 90_001 }]));
      const result = await importFile(store, path, { resource: 'products' });
      assert.deepEqual([result.created, result.updated], [1, 1]);
      assert.equal((await store.db.selectFrom('products').select('name').where('id', '=', target.id).executeTakeFirstOrThrow()).name, 'By id');
      assert.equal((await store.db.selectFrom('products').select('article_number').where('id', '=', 90_001).executeTakeFirstOrThrow()).article_number, 'IMP-ID');
      const next = await importFile(store, file('products.jsonl', jsonl([product('IMP-AFTER')])));
      assert.equal(next.created, 1);
      const after = await store.db.selectFrom('products').select('id').where('article_number', '=', 'IMP-AFTER').executeTakeFirstOrThrow();
      assert.ok(Number(after.id) > 90_001, `new ids continue after imported ones (got ${after.id})`);
    });

    it('writes nothing when any line is bad, and names every bad line', async () => {
      const start = await head(store);
      const count = async () => Number((await store.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await count();
      const path = file('products.jsonl', jsonl([
        product('GOOD-1'),
        product('BAD-1', { brandId: 99_999 }),
        product('BAD-2', { price: '12,50' }),
        '{not json',
        { name: 'no article number' },
        product('GOOD-2', { colour: 'red' }),
      ]));
      await assert.rejects(importFile(store, path), (error: unknown) => {
        assert.ok(error instanceof ImportFailed);
        assert.match(error.message, /nothing was written/);
        const byLine = error.issues.map((i) => `${i.line} ${i.field ?? ''} ${i.reason}`);
        assert.deepEqual(byLine.filter((l) => !l.startsWith('5 ')), [
          '2 brandId brand 99999 does not exist',
          '3 price must be a decimal string such as "1299.00"',
          `4  ${error.issues.find((i) => i.line === 4)!.reason}`,
          '6 colour is not a field of this resource',
        ]);
        assert.match(error.issues.find((i) => i.line === 4)!.reason, /not valid JSON/);
        assert.deepEqual(error.issues.filter((i) => i.line === 5).map((i) => i.field).sort(), ['articleNumber', 'currency', 'price', 'vatRate']);
        return true;
      });
      assert.equal(await count(), before);
      assert.equal(await store.db.selectFrom('products').select('id').where('article_number', '=', 'GOOD-1').executeTakeFirst(), undefined);
      assert.equal(await head(store), start);
    });

    it('reads orders from CSV, one row per item, and records status changes', async () => {
      const productId = Number((await store.db.selectFrom('products').select('id').orderBy('id').executeTakeFirstOrThrow()).id);
      const header = 'number,status,email,customerName,currency,billingAddress.name,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,items.productId,items.name,items.quantity,items.unitPrice,items.vatRate';
      const rows = (status: string) => [
        header,
        `IMP-O-1,${status},jan@example.com,Jan Novák,CZK,Jan Novák,Hlavní 1,Praha,11000,CZ,${productId},Hammer,2,12.50,21`,
        `IMP-O-1,${status},jan@example.com,Jan Novák,CZK,Jan Novák,Hlavní 1,Praha,11000,CZ,,Glue,1,3.00,21`,
      ].join('\n');
      const created = await importFile(store, file('orders.csv', rows('new')));
      assert.deepEqual([created.records, created.created, created.events], [1, 1, 1]);
      const order = await store.db.selectFrom('orders').selectAll().where('number', '=', 'IMP-O-1').executeTakeFirstOrThrow();
      assert.equal(String(order.total), '28.00');
      const items = await store.db.selectFrom('order_items').select(['name', 'quantity', 'product_id']).where('order_id', '=', order.id).orderBy('position').execute();
      assert.deepEqual(items.map((i) => [i.name, Number(i.quantity), i.product_id === null ? null : Number(i.product_id)]), [['Hammer', 2, productId], ['Glue', 1, null]]);
      const start = await head(store);
      const shipped = await importFile(store, file('orders.csv', rows('shipped')));
      assert.deepEqual([shipped.updated, shipped.events], [1, 2]);
      assert.deepEqual((await eventsAfter(store, start)).map((e) => e.type), ['order.updated', 'order.status_changed']);
      const bad = file('orders.csv', `${header}\nIMP-O-2,new,x@example.com,X,CZK,X,S 1,C,1,CZ,,Nail,0,1.00,21\nIMP-O-2,paid,x@example.com,X,CZK,X,S 1,C,1,CZ,,Nut,1,1.00,21`);
      await assert.rejects(importFile(store, bad), (error: unknown) => {
        assert.ok(error instanceof ImportFailed);
        assert.deepEqual(error.issues.map((i) => [i.line, i.field]).sort(), [[2, 'items.0.quantity'], [3, 'status']]);
        return true;
      });
    });

    it('refuses an unknown CSV column on the header line', async () => {
      await assert.rejects(importFile(store, file('brands.csv', 'name,colour\nX,red\n')), (error: unknown) => {
        assert.ok(error instanceof ImportFailed);
        assert.equal(error.issues[0].line, 1);
        assert.match(error.issues[0].reason, /unknown column "colour"/);
        return true;
      });
    });
  });
}

describe('store-api import (command line, sqlite)', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, ['bin/store-api.js', '--database', `sqlite:${join(dir, 'cli.db')}`, 'import', ...args], { encoding: 'utf8' });

  it('imports a file and answers JSON; a bad file exits 1 naming the lines', () => {
    const ok = run(file('brands.jsonl', jsonl([{ name: 'Cli Brand' }, { name: 'Other', slug: 'other-brand' }])), '--json');
    assert.equal(ok.status, 0, ok.stderr);
    const result = JSON.parse(ok.stdout);
    assert.deepEqual([result.resource, result.created, result.events], ['brands', 2, 2]);
    const bad = run(file('data.csv', 'name,slug\nGood,good\nBad,Not A Slug\n'), '--resource', 'brands');
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^line 3: slug: must match/m);
    assert.match(bad.stderr, /import of brands failed with 1 error; nothing was written/);
    const unknown = run(file('data.txt', 'x'), '--resource', 'brands');
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /give --format jsonl\|csv/);
  });
});
