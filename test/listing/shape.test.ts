import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import type { Executor } from '../../src/db/database.ts';
import { listPage, orderedQuery, plan } from '../../src/listing/engine.ts';
import { orders } from '../../src/modules/orders/resource.ts';
import { products } from '../../src/modules/products/resource.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { csvText, DATE_COLUMNS, MONEY_COLUMNS, readCsv, readXlsx, serialToMs, type Item } from './formats/readers.ts';

const ALL_SCOPES = RESOURCES.map((r) => r.scope);

/** The item trimmed to `fields` (and id), in the item's own order: what a shaped answer must be. */
const pick = (item: Item, fields: string[]): Item => Object.fromEntries(Object.entries(item).filter(([k]) => k === 'id' || fields.includes(k)));

/** A Kysely over the same connection that counts the queries it runs (results pass through every query, compiled or built). */
function counting(db: Executor): { db: Executor; count(): number } {
  let n = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      n += 1;
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin) as Executor, count: () => n };
}

for (const dialect of await dialects()) {
  describe(`fields= and include= (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    const get = (url: string, as = token) => t.get(url, as);
    /** Every product and order as the unshaped JSON listing has them. */
    let fullProducts: Item[];
    let fullOrders: Item[];

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 40, orders: 12 } });
      ({ token } = await t.credential(ALL_SCOPES));
      fullProducts = (await get('/api/v2/products?limit=1000')).json().data;
      fullOrders = (await get('/api/v2/orders?limit=1000')).json().data;
    });
    after(() => t.close());

    it('fields= trims JSON, NDJSON, CSV and XLSX to the asked fields (id always), values equal to the full JSON', async () => {
      const fields = ['price', 'name', 'updatedAt', 'articleNumber'];
      const declared = products.fields.map((f) => f.name).filter((n) => n === 'id' || fields.includes(n));
      const want = fullProducts.map((p) => pick(p, fields));

      const json = await get(`/api/v2/products?limit=1000&fields=${fields.join(',')}`);
      assert.equal(json.statusCode, 200, json.body);
      assert.deepEqual(json.json().data, want);
      assert.deepEqual(Object.keys(json.json().data[0]), declared, 'declaration order, whatever the order asked');

      const ndjson = await get(`/api/v2/products?format=ndjson&fields=${fields.join(',')}`);
      assert.equal(ndjson.statusCode, 200);
      assert.deepEqual(ndjson.body.trimEnd().split('\n').map((l) => JSON.parse(l)), want);

      const [header, ...rows] = readCsv((await get(`/api/v2/products?format=csv&escapeFormulas=false&fields=${fields.join(',')}`)).rawPayload);
      assert.deepEqual(header, declared);
      assert.deepEqual(rows, want.map((p) => declared.map((c) => csvText(p[c]))));

      const sheet = readXlsx((await get(`/api/v2/products?format=xlsx&fields=${fields.join(',')}`)).rawPayload);
      assert.deepEqual(sheet.rows[0], declared);
      sheet.rows.slice(1).forEach((row, i) => declared.forEach((c, j) => {
        const v = want[i][c];
        if (DATE_COLUMNS.has(c)) assert.equal(serialToMs(row[j] as number), Date.parse(v as string));
        else if (MONEY_COLUMNS.has(c)) assert.equal(row[j], Number(v));
        else assert.equal(row[j], v);
      }));
    });

    it('a nested value is a field: orders without items are one row each, and with fields=items the items come', async () => {
      const numbers = await get('/api/v2/orders?limit=1000&fields=number,status');
      assert.deepEqual(numbers.json().data, fullOrders.map((o) => pick(o, ['number', 'status'])));
      const [header, ...rows] = readCsv((await get('/api/v2/orders?format=csv&fields=number')).rawPayload);
      assert.deepEqual(header, ['id', 'number']);
      assert.equal(rows.length, fullOrders.length, 'one row per order when items are not asked');
      const withItems = (await get('/api/v2/orders?limit=1000&fields=items')).json().data;
      assert.deepEqual(withItems, fullOrders.map((o) => pick(o, ['items'])));
      const lines = (await get('/api/v2/orders?format=ndjson&fields=number,items,billingAddress')).body.trimEnd().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(lines, fullOrders.map((o) => pick(o, ['number', 'items', 'billingAddress'])), 'nested values stay objects in NDJSON');
    });

    it('single items take fields and include, and carry Last-Modified even without updatedAt (not with include)', async () => {
      const p = fullProducts.find((x) => x.brandId !== null)!;
      const res = await get(`/api/v2/products/${p.id}?fields=name,price&include=brand`);
      assert.equal(res.statusCode, 200, res.body);
      const brand = (await get(`/api/v2/brands/${p.brandId}`)).json();
      assert.deepEqual(res.json(), { ...pick(p, ['name', 'price']), brand });
      // The brand's changes leave the product's updatedAt: a date would be a wrong validator (the ETag is the one).
      assert.equal(res.headers['last-modified'], undefined);
      const trimmed = await get(`/api/v2/products/${p.id}?fields=name,price`);
      assert.equal(trimmed.headers['last-modified'], new Date(p.updatedAt as string).toUTCString());
      assert.equal((await get(`/api/v2/products/${p.id}?fields=nope`)).statusCode, 400);
      const full = await get(`/api/v2/products/${p.id}`);
      assert.deepEqual(full.json(), p);
      assert.equal(full.headers['last-modified'], new Date(p.updatedAt as string).toUTCString());
    });

    it('unknown fields and includes are 400s naming the parameter and listing the valid names', async () => {
      for (const [url, name, mentions] of [
        ['/api/v2/products?fields=id,colour', 'fields', 'articleNumber'],
        ['/api/v2/products?include=brand,maker', 'include', 'parameters'],
        ['/api/v2/products?fields=brand.name', 'fields', 'include=brand'],
        ['/api/v2/products?include=brand&fields=brand.colour', 'fields', 'slug'],
        ['/api/v2/orders?fields=items.name', 'fields', 'items'],
        ['/api/v2/brands?include=products', 'include', ''],
        ['/api/v2/products?fields=', 'fields', ''],
        ['/api/v2/products/1?include=brands', 'include', 'brand'],
        ['/api/v2/products?include=__proto__', 'include', 'brand'],
        ['/api/v2/products?include=constructor&fields=constructor.name', 'include', 'brand'],
        ['/api/v2/products?fields=__proto__', 'fields', 'articleNumber'],
        ['/api/v2/products?include=brand&fields=brand.__proto__', 'fields', 'slug'],
      ] as const) {
        const res = await get(url);
        assert.equal(res.statusCode, 400, url);
        const problem = res.json();
        assert.equal(problem.code, 'invalid_parameter', url);
        assert.equal(problem.errors[0].name, name, url);
        assert.ok(problem.detail.includes(mentions), `${url}: ${problem.detail}`);
      }
    });

    it('include needs the read scope of what it embeds: 403 naming the scope', async () => {
      const { token: productsOnly } = await t.credential(['products:read']);
      for (const [include, scope] of [['brand', 'brands:read'], ['category', 'categories:read'], ['parameters', 'product-parameters:read'], ['filters', 'product-filters:read']]) {
        for (const url of [`/api/v2/products?include=${include}`, `/api/v2/products?include=${include}&format=csv`, `/api/v2/products/1?include=${include}`]) {
          const res = await get(url, productsOnly);
          assert.equal(res.statusCode, 403, url);
          assert.equal(res.json().code, 'insufficient_scope');
          assert.match(res.headers['www-authenticate'] as string, new RegExp(`scope="${scope}"`), url);
        }
      }
      const { token: ordersOnly } = await t.credential(['orders:read']);
      const res = await get('/api/v2/orders?include=products', ordersOnly);
      assert.equal(res.statusCode, 403);
      assert.match(res.json().detail, /products:read/);
      // A cursor carries its include: continuing it needs the scope too.
      const first = (await get('/api/v2/products?include=brand&limit=2')).json();
      assert.equal((await get(`/api/v2/products?cursor=${first.pagination.nextCursor}`, productsOnly)).statusCode, 403);
    });

    it('include embeds objects and arrays in JSON and NDJSON, prefixed columns and JSON cells in CSV and XLSX', async () => {
      const brands = new Map<unknown, Item>(((await get('/api/v2/brands?limit=1000')).json().data as Item[]).map((b) => [b.id, b]));
      const params = (await get('/api/v2/product-parameters?limit=1000')).json().data as Item[];
      const want: Item[] = fullProducts.map((p) => ({
        ...pick(p, ['name']),
        brand: p.brandId === null ? null : pick(brands.get(p.brandId)!, ['name']),
        parameters: params.filter((v) => v.productId === p.id),
      }));
      const url = '/api/v2/products?include=brand,parameters&fields=name,brand.name';
      assert.deepEqual((await get(`${url}&limit=1000`)).json().data, want);
      assert.deepEqual((await get(`${url}&format=ndjson`)).body.trimEnd().split('\n').map((l) => JSON.parse(l)), want);
      const paged = (await get(`${url}&format=ndjson&limit=7`)).body.trimEnd().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(paged, want.slice(0, 7));

      const [header, ...rows] = readCsv((await get(`${url}&format=csv&escapeFormulas=false`)).rawPayload);
      assert.deepEqual(header, ['id', 'name', 'brand.id', 'brand.name', 'parameters']);
      assert.deepEqual(rows, want.map((p) => [String(p.id), p.name, csvText((p.brand as Item | null)?.id), csvText((p.brand as Item | null)?.name), JSON.stringify(p.parameters)]));

      const sheet = readXlsx((await get(`${url}&format=xlsx`)).rawPayload);
      assert.deepEqual(sheet.rows[0], header);
      assert.deepEqual(sheet.rows.slice(1).map((r) => [r[0], r[1], r[2], r[3], JSON.parse(r[4] as string)]), want.map((p) => [p.id, p.name, (p.brand as Item | null)?.id ?? null, (p.brand as Item | null)?.name ?? null, p.parameters]));
    });

    it("orders' products are the products of their items, each once, trimmed by fields", async () => {
      const byId = new Map<unknown, Item>(fullProducts.map((p) => [p.id, p]));
      const data = (await get('/api/v2/orders?limit=1000&include=products&fields=number,products.price,products.articleNumber')).json().data as Item[];
      assert.equal(data.length, fullOrders.length);
      data.forEach((o, i) => {
        const ids = [...new Set((fullOrders[i].items as Item[]).map((l) => l.productId).filter((id) => id !== null))].sort((a, b) => Number(a) - Number(b));
        assert.deepEqual(o, { id: fullOrders[i].id, number: fullOrders[i].number, products: ids.map((id) => pick(byId.get(id)!, ['articleNumber', 'price'])) });
      });
    });

    it('a cursor carries fields and include: the Link and a cursor-only request continue in the same shape', async () => {
      const want = fullProducts.map((p) => pick(p, ['name']));
      const seen: Item[] = [];
      let res = await get('/api/v2/products?fields=name&sort=-id&limit=15');
      for (;;) {
        const body = res.json();
        seen.push(...body.data);
        if (!body.pagination.nextCursor) break;
        res = await get(`/api/v2/products?cursor=${body.pagination.nextCursor}&limit=15`);
      }
      assert.deepEqual(seen, [...want].reverse());
      // Another shape with the same cursor: allowed (the shape does not change which rows come next).
      const first = (await get('/api/v2/products?fields=name&sort=updatedAt&limit=5')).json();
      const other = (await get(`/api/v2/products?cursor=${first.pagination.nextCursor}&fields=price&limit=5`)).json();
      assert.deepEqual(Object.keys(other.data[0]), ['id', 'price'], 'updatedAt, the hidden sort key, is not shown');
    });

    it('the query selects only the asked columns (and the keyset sort key), and loads includes in one query per relation', async () => {
      const compiled = (await orderedQuery(t.ctx.store.db, plan(products, { filters: {}, sort: '-updatedAt', shape: { fields: ['name'] } }, 'k'))).compile().sql;
      const selected = /select (.*?) from/is.exec(compiled)![1];
      assert.deepEqual([...selected.matchAll(/as "(\w+)"/g)].map((m) => m[1]), ['id', 'name', 'updatedAt']);
      assert.doesNotMatch(selected, /description|price/);

      for (const limit of [3, 40]) {
        const c = counting(t.ctx.store.db);
        const page = await listPage(c.db, products, { limit, filters: {}, shape: { include: ['brand', 'category', 'parameters', 'filters'] } }, 'k');
        assert.equal(page.data.length, limit);
        assert.equal(c.count(), 1 + 4, `limit ${limit}: the page and one query per included relation`);
      }
      const c = counting(t.ctx.store.db);
      await listPage(c.db, orders, { limit: 12, filters: {}, shape: { fields: ['number'], include: ['products'] } }, 'k');
      assert.equal(c.count(), 2, 'no items query when items are not asked; one for the products');
      const d = counting(t.ctx.store.db);
      await listPage(d.db, orders, { limit: 12, filters: {}, shape: { fields: ['number', 'items'], include: ['products'] } }, 'k');
      assert.equal(d.count(), 3);
    });

    it('the OpenAPI document lists fields and include and documents the embedded shapes', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json();
      const params = doc.paths['/api/v2/products'].get.parameters as Array<{ name: string }>;
      assert.ok(params.some((p) => p.name === 'fields') && params.some((p) => p.name === 'include'));
      const item = doc.components.schemas.Product;
      assert.deepEqual(item.properties.brand.type, ['object', 'null']);
      assert.equal(item.properties.parameters.type, 'array');
      assert.ok(!item.required.includes('brand'), 'an include is never required');
      assert.equal(doc.components.schemas.Order.properties.products.items.properties.price.type, 'string');
    });
  });
}
