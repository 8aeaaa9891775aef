import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { encodeCursor } from '../../src/listing/cursor.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

type Row = Record<string, unknown>;
type Item = Record<string, unknown> & { id: number; updatedAt: string; createdAt: string };

const TABLES: Record<string, string> = {
  products: 'products', categories: 'categories', brands: 'brands',
  'product-parameters': 'product_parameters', 'product-filters': 'product_filters', orders: 'orders',
};
const BASE = 'http://store.test';

/** Ids in the order a sort must give, computed here from the rows the database holds. */
function expectedOrder(rows: Row[], sort: string): number[] {
  const desc = sort.startsWith('-');
  const key = sort.replace(/^-/, '');
  const column = key === 'updatedAt' ? 'updated_at' : key === 'createdAt' ? 'created_at' : 'id';
  const sorted = [...rows].sort((a, b) => {
    const primary = column === 'id' ? 0 : String(a[column]).localeCompare(String(b[column]));
    return primary !== 0 ? primary : Number(a.id) - Number(b.id);
  });
  if (desc) sorted.reverse();
  return sorted.map((r) => Number(r.id));
}

const sortedIds = (ids: number[]) => [...ids].sort((a, b) => a - b);

/** The tag the API puts on a cursor payload, recomputed from its key (to sign forged states in tests). */
function signedTag(hashKey: string, payload: string): string {
  const key = createHmac('sha256', hashKey).update('store-data-api listing cursor v1').digest();
  return createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
}

for (const dialect of await dialects()) {
  describe(`listing every collection (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    const rows: Record<string, Row[]> = {};

    const get = (url: string) => t.get(url, token);
    const json = async (url: string) => {
      const res = await get(url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json() as { data: Item[]; pagination: { limit: number; nextCursor: string | null; hasMore: boolean; total?: number } };
    };
    /** Every id a filtered listing gives, through all its pages. */
    const allIds = async (url: string): Promise<number[]> => {
      const ids: number[] = [];
      let next: string | null = `${url}${url.includes('?') ? '&' : '?'}limit=1000`;
      while (next) {
        const page = await json(next);
        ids.push(...page.data.map((d) => d.id));
        next = page.pagination.nextCursor ? `${url.split('?')[0]}?cursor=${page.pagination.nextCursor}&limit=1000` : null;
      }
      return ids;
    };
    const loadRows = async () => {
      for (const [collection, table] of Object.entries(TABLES)) {
        rows[collection] = (await t.database.store.db.selectFrom(table as 'products').selectAll().execute()) as unknown as Row[];
      }
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 80, orders: 60, seed: 1 } });
      // Names with LIKE's wildcard characters and non-ASCII letters, for the substring filters.
      for (const [articleNumber, name] of [['W-1', '100% Cotton_Rag'], ['W-2', '100 Percent Cotton Rag'], ['W-3', 'Čistič oken ŽLUTÝ']]) {
        const res = await t.admin('POST', '/admin/api/products', { articleNumber, name, price: '10.00', currency: 'CZK', vatRate: 21, status: 'draft' });
        assert.equal(res.statusCode, 201, res.body);
      }
      await loadRows();
      token = (await t.credential(RESOURCES.map((r) => r.scope) as Scope[])).token;
    });
    after(() => t.close());

    for (const def of RESOURCES) {
      const url = `/api/v2/${def.collection}`;
      describe(def.collection, () => {
        it('answers the envelope with the default limit of 50', async () => {
          const res = await get(url);
          assert.equal(res.statusCode, 200);
          assert.match(String(res.headers['content-type']), /^application\/json/);
          const body = res.json();
          assert.deepEqual(Object.keys(body).sort(), ['data', 'pagination']);
          const count = rows[def.collection].length;
          assert.equal(body.pagination.limit, 50);
          assert.equal(body.data.length, Math.min(50, count));
          assert.equal(body.pagination.hasMore, count > 50);
          assert.equal(body.pagination.nextCursor === null, count <= 50);
          assert.equal('total' in body.pagination, false, 'total only with includeTotal=true');
          assert.deepEqual(body.data.map((d: Item) => d.id), expectedOrder(rows[def.collection], def.defaultSort).slice(0, 50));
          if (count > 50) assert.ok(res.headers.link);
          else assert.equal(res.headers.link, undefined);
        });

        it('takes limit 1 to 1000 and refuses others with a problem naming limit', async () => {
          assert.equal((await json(`${url}?limit=1`)).data.length, 1);
          assert.equal((await json(`${url}?limit=1000`)).data.length, Math.min(1000, rows[def.collection].length));
          for (const bad of ['0', '1001', '-1', '1.5', '', 'abc', '1e2', '0x10', '%201']) {
            const problem = problemOf(await get(`${url}?limit=${bad}`), 400, 'invalid_parameter', 'limit');
            assert.match(problem.errors![0].reason, /1 and 1000/);
          }
          problemOf(await get(`${url}?limit=2&limit=3`), 400, 'invalid_parameter', 'limit');
        });

        const sorts = def.sorts.flatMap((s) => [s, `-${s}`]);
        for (const sort of sorts) {
          it(`sort=${sort}: a cursor walk gives every item once, in order, and Link follows it`, async () => {
            const expected = expectedOrder(rows[def.collection], sort);
            const limit = Math.max(3, Math.ceil(expected.length / 6));
            const seen: number[] = [];
            let next: string | undefined = `${url}?sort=${sort}&limit=${limit}`;
            let pages = 0;
            while (next) {
              const res = await get(next);
              assert.equal(res.statusCode, 200, res.body);
              const body = res.json();
              seen.push(...body.data.map((d: Item) => d.id));
              pages++;
              if (body.pagination.hasMore) {
                assert.equal(body.data.length, limit);
                const link = String(res.headers.link);
                const m = /^<([^>]+)>; rel="next"$/.exec(link);
                assert.ok(m, `Link header: ${link}`);
                const target = new URL(m[1]);
                assert.equal(target.origin, BASE);
                assert.equal(target.pathname, url);
                assert.equal(target.searchParams.get('cursor'), body.pagination.nextCursor);
                assert.equal(target.searchParams.get('sort'), sort);
                assert.equal(target.searchParams.get('limit'), String(limit));
                next = `${target.pathname}${target.search}`;
              } else {
                assert.equal(body.pagination.nextCursor, null);
                assert.equal(res.headers.link, undefined);
                next = undefined;
              }
            }
            assert.deepEqual(seen, expected);
            assert.equal(new Set(seen).size, seen.length);
            assert.equal(pages, Math.max(1, Math.ceil(expected.length / limit)));
          });
        }

        it('continues from a bare cursor and refuses a cursor with other filters or sort', async () => {
          const first = await json(`${url}?sort=-id&limit=2`);
          const cursor = first.pagination.nextCursor!;
          const bare = await json(`${url}?cursor=${cursor}&limit=2`);
          assert.deepEqual(bare.data.map((d) => d.id), expectedOrder(rows[def.collection], '-id').slice(2, 4));
          assert.deepEqual((await json(`${url}?cursor=${cursor}&limit=2&sort=-id`)).data.map((d) => d.id), bare.data.map((d) => d.id));
          problemOf(await get(`${url}?cursor=${cursor}&sort=id`), 400, 'cursor_mismatch', 'cursor');
          problemOf(await get(`${url}?cursor=${cursor}&ids=1,2,3`), 400, 'cursor_mismatch', 'cursor');
          const filtered = await json(`${url}?ids=1,2,3,4,5&sort=id&limit=2`);
          const filteredCursor = filtered.pagination.nextCursor!;
          assert.deepEqual((await json(`${url}?cursor=${filteredCursor}`)).data.map((d) => d.id), [3, 4, 5]);
          assert.deepEqual((await json(`${url}?cursor=${filteredCursor}&ids=1,2,3,4,5`)).data.map((d) => d.id), [3, 4, 5]);
          problemOf(await get(`${url}?cursor=${filteredCursor}&ids=1,2,3,4`), 400, 'cursor_mismatch', 'cursor');
        });

        it('refuses malformed cursors naming cursor, even when correctly signed', async () => {
          const payload = (state: unknown) => Buffer.from(JSON.stringify(state)).toString('base64url');
          // Signed with this installation's key, so that the checks behind the signature are reached too.
          const signed = (state: unknown) => { const p = payload(state); return `${p}.${signedTag(t.ctx.hashKey, p)}`; };
          for (const forged of [payload, signed]) {
            for (const bad of ['xyz', '', '!!!', 'a.b.c', forged({ v: 1, s: 'id', f: {}, a: ['x'] }), forged({ v: 2, s: 'id', f: {}, a: [1] }), forged({ v: 1, s: 'updatedAt', f: {}, a: [1] }), forged([1, 2]), forged({ v: 1, s: 'id', f: { ids: '1\u0000' }, a: [1] }), forged({ v: 1, s: 'id', f: {}, a: [1e300] })]) {
              problemOf(await get(`${url}?cursor=${encodeURIComponent(bad)}`), 400, 'invalid_parameter', 'cursor');
            }
          }
        });

        it('refuses a cursor whose position, filters or sort were altered, or that another installation signed', async () => {
          const page = await json(`${url}?ids=1,2,3,4,5&sort=id&limit=2`);
          const cursor = page.pagination.nextCursor!;
          const [body, tag] = cursor.split('.');
          type State = { v: number; s: string; f: Record<string, string>; a: number[] };
          const state: State = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as State;
          assert.deepEqual({ ...state }, { v: 1, s: 'id', f: { ids: '1,2,3,4,5' }, a: [2] }, 'the cursor is readable: it is signed, not secret');
          const altered = (change: Partial<State>) => `${Buffer.from(JSON.stringify({ ...state, ...change })).toString('base64url')}.${tag}`;
          for (const bad of [
            altered({ a: [0] }),
            altered({ f: {} }), // widening the walk to every row
            altered({ f: { ids: '1,2,3,4,5,6' } }),
            altered({ s: '-id' }),
            body, // the signature dropped
            `${body}.${tag.slice(0, -2)}${tag.endsWith('AA') ? 'AB' : 'AA'}`,
            encodeCursor({ sort: 'id', filters: { ids: '1,2,3,4,5' }, after: [2] }, 'another installation'),
          ]) {
            const res = await get(`${url}?cursor=${encodeURIComponent(bad)}`);
            problemOf(res, 400, 'invalid_parameter', 'cursor');
            assert.match(res.json().errors[0].reason, /not a cursor issued by this API, or it was altered/);
          }
          assert.deepEqual((await json(`${url}?cursor=${encodeURIComponent(cursor)}`)).data.map((d) => d.id), [3, 4, 5], 'the cursor itself still works');
        });

        it('adds pagination.total with includeTotal=true, counting every match', async () => {
          const page = await json(`${url}?includeTotal=true&limit=1`);
          assert.equal(page.pagination.total, rows[def.collection].length);
          const filtered = await json(`${url}?includeTotal=true&limit=1&ids=1,2,3`);
          assert.equal(filtered.pagination.total, 3);
          assert.equal((await json(`${url}?includeTotal=false`)).pagination.total, undefined);
          problemOf(await get(`${url}?includeTotal=yes`), 400, 'invalid_parameter', 'includeTotal');
        });

        it('filters by updatedSince: date-time with and without offset, and date-only', async () => {
          const stamps = [...new Set(rows[def.collection].map((r) => String(r.updated_at)))].sort();
          const pivot = stamps[Math.floor(stamps.length / 2)];
          const atOrAfter = (iso: string) => sortedIds(rows[def.collection].filter((r) => String(r.updated_at) >= iso).map((r) => Number(r.id)));
          assert.deepEqual(sortedIds(await allIds(`${url}?updatedSince=${pivot}`)), atOrAfter(pivot));
          // The same instant two hours ahead with +02:00, encoded and as a bare "+" (which decodes to a space).
          const ahead = new Date(Date.parse(pivot) + 7_200_000).toISOString().replace('Z', '+02:00');
          assert.deepEqual(sortedIds(await allIds(`${url}?updatedSince=${encodeURIComponent(ahead)}`)), atOrAfter(pivot));
          assert.deepEqual(sortedIds(await allIds(`${url}?updatedSince=${ahead}`)), atOrAfter(pivot));
          // Without an offset the time is UTC.
          assert.deepEqual(sortedIds(await allIds(`${url}?updatedSince=${pivot.replace('Z', '')}`)), atOrAfter(pivot));
          // A date means the start of that day, UTC.
          const day = pivot.slice(0, 10);
          assert.deepEqual(sortedIds(await allIds(`${url}?updatedSince=${day}`)), atOrAfter(`${day}T00:00:00.000Z`));
          assert.equal((await json(`${url}?updatedSince=2999-01-01`)).data.length, 0);
          assert.equal((await json(`${url}?updatedSince=0001-01-01&includeTotal=true`)).pagination.total, rows[def.collection].length, '"since ever" is a valid date');
          for (const bad of ['garbage', '2026-02-30', '2026-02-30T10:00:00Z', '2026-01-01T25:00:00Z', '2026-13-01', '']) {
            problemOf(await get(`${url}?updatedSince=${bad}`), 400, 'invalid_parameter', 'updatedSince');
          }
        });

        it('filters by ids', async () => {
          const ids = rows[def.collection].slice(0, 5).map((r) => Number(r.id));
          const pick = [ids[4], ids[0], ids[2]];
          assert.deepEqual((await json(`${url}?ids=${pick.join(',')}&sort=id`)).data.map((d) => d.id), sortedIds(pick));
          assert.deepEqual((await json(`${url}?ids=${pick[0]},${pick[0]}&sort=id`)).data.map((d) => d.id), [pick[0]]);
          assert.equal((await json(`${url}?ids=999999`)).data.length, 0);
          for (const bad of ['', ',', 'a', '1,,2', '0', '-3', '1.5', '99999999999999999']) {
            problemOf(await get(`${url}?ids=${bad}`), 400, 'invalid_parameter', 'ids');
          }
        });

        it('refuses unknown and repeated query parameters, naming them', async () => {
          problemOf(await get(`${url}?foo=1`), 400, 'invalid_parameter', 'foo');
          problemOf(await get(`${url}?constructor=1`), 400, 'invalid_parameter', 'constructor');
          problemOf(await get(`${url}?__proto__=1`), 400, 'invalid_parameter', '__proto__');
          problemOf(await get(`${url}?ids=1&ids=2`), 400, 'invalid_parameter', 'ids');
          problemOf(await get(`${url}?sort=nope`), 400, 'invalid_parameter', 'sort');
          problemOf(await get(`${url}?sort=`), 400, 'invalid_parameter', 'sort');
          // PostgreSQL cannot hold a NUL in text: it is bad input, not a failed statement.
          for (const name of def.filters.map((f) => f.name)) problemOf(await get(`${url}?${name}=a%00b`), 400, 'invalid_parameter', name);
        });
      });
    }

    describe('filters of the contract', () => {
      const products = () => rows.products;
      const ids = (list: Row[]) => sortedIds(list.map((r) => Number(r.id)));

      it('products: q matches name or article number, case-insensitively, with % and _ taken literally', async () => {
        const word = String(products()[3].name).split(' ')[2];
        const needle = word.toLowerCase();
        assert.deepEqual(sortedIds(await allIds(`/api/v2/products?q=${encodeURIComponent(word.toUpperCase())}`)),
          ids(products().filter((p) => String(p.name_lc).includes(needle) || String(p.article_number_lc).includes(needle))));
        assert.deepEqual(sortedIds(await allIds('/api/v2/products?q=sku-000001')),
          ids(products().filter((p) => String(p.article_number_lc).includes('sku-000001'))));
        const w1 = Number(products().find((p) => p.article_number === 'W-1')!.id);
        assert.deepEqual(await allIds('/api/v2/products?q=%25'), [w1]);
        assert.deepEqual(await allIds('/api/v2/products?q=_'), [w1]);
        assert.deepEqual(await allIds('/api/v2/products?q=0%25%20c'), [w1]);
        const w3 = Number(products().find((p) => p.article_number === 'W-3')!.id);
        assert.deepEqual(await allIds(`/api/v2/products?q=${encodeURIComponent('čistič')}`), [w3]);
        assert.deepEqual(await allIds(`/api/v2/products?q=${encodeURIComponent('žlutý')}`), [w3]);
        problemOf(await get('/api/v2/products?q='), 400, 'invalid_parameter', 'q');
      });

      it('products: name matches the name only', async () => {
        assert.deepEqual(await allIds('/api/v2/products?name=sku-'), []);
        const expected = ids(products().filter((p) => String(p.name_lc).includes('cotton')));
        assert.equal(expected.length, 2);
        assert.deepEqual(sortedIds(await allIds('/api/v2/products?name=COTTON')), expected);
      });

      it('products: articleNumber is exact, as a comma list', async () => {
        const [a, b] = [products()[5], products()[9]];
        assert.deepEqual(sortedIds(await allIds(`/api/v2/products?articleNumber=${a.article_number},${b.article_number}`)), ids([a, b]));
        assert.deepEqual(await allIds(`/api/v2/products?articleNumber=${String(a.article_number).slice(0, 6)}`), []);
        problemOf(await get('/api/v2/products?articleNumber=,'), 400, 'invalid_parameter', 'articleNumber');
      });

      it('products: status, brandId and categoryId comma lists, combined with AND', async () => {
        assert.deepEqual(sortedIds(await allIds('/api/v2/products?status=draft,archived')), ids(products().filter((p) => p.status !== 'active')));
        const brandIds = [...new Set(products().map((p) => p.brand_id).filter((b) => b !== null))].slice(0, 2) as number[];
        assert.deepEqual(sortedIds(await allIds(`/api/v2/products?brandId=${brandIds.join(',')}`)), ids(products().filter((p) => brandIds.includes(Number(p.brand_id)))));
        assert.deepEqual(sortedIds(await allIds(`/api/v2/products?brandId=${brandIds[0]}&status=active`)),
          ids(products().filter((p) => Number(p.brand_id) === brandIds[0] && p.status === 'active')));
        const categoryIds = [...new Set(products().map((p) => p.category_id).filter((c) => c !== null))].slice(0, 2) as number[];
        assert.deepEqual(sortedIds(await allIds(`/api/v2/products?categoryId=${categoryIds.join(',')}`)), ids(products().filter((p) => categoryIds.includes(Number(p.category_id)))));
        problemOf(await get('/api/v2/products?status=bogus'), 400, 'invalid_parameter', 'status');
        problemOf(await get('/api/v2/products?status=active&status=draft'), 400, 'invalid_parameter', 'status');
        problemOf(await get('/api/v2/products?brandId=abc'), 400, 'invalid_parameter', 'brandId');
        problemOf(await get('/api/v2/products?categoryId=0'), 400, 'invalid_parameter', 'categoryId');
      });

      it('products: categoryId with includeSubcategories=true takes whole subtrees', async () => {
        const categories = rows.categories;
        const subtree = (root: number): number[] => [root, ...categories.filter((c) => Number(c.parent_id) === root).flatMap((c) => subtree(Number(c.id)))];
        const roots = categories.filter((c) => c.parent_id === null).map((c) => Number(c.id));
        for (const root of roots.slice(0, 3)) {
          const tree = subtree(root);
          assert.ok(tree.length > 1);
          const expected = ids(products().filter((p) => tree.includes(Number(p.category_id))));
          assert.ok(expected.length > 0, 'the seeder puts products in leaves');
          assert.deepEqual(sortedIds(await allIds(`/api/v2/products?categoryId=${root}&includeSubcategories=true`)), expected);
          assert.deepEqual(await allIds(`/api/v2/products?categoryId=${root}`), [], 'roots hold no products themselves');
          assert.deepEqual(await allIds(`/api/v2/products?categoryId=${root}&includeSubcategories=false`), []);
        }
        problemOf(await get('/api/v2/products?categoryId=1&includeSubcategories=maybe'), 400, 'invalid_parameter', 'includeSubcategories');
      });

      it('categories: parentId as a comma list, and null for the roots', async () => {
        const categories = rows.categories;
        assert.deepEqual(sortedIds(await allIds('/api/v2/categories?parentId=null')), ids(categories.filter((c) => c.parent_id === null)));
        const parents = categories.filter((c) => c.parent_id === null).slice(0, 2).map((c) => Number(c.id));
        assert.deepEqual(sortedIds(await allIds(`/api/v2/categories?parentId=${parents.join(',')}`)), ids(categories.filter((c) => parents.includes(Number(c.parent_id)))));
        problemOf(await get('/api/v2/categories?parentId=null,1'), 400, 'invalid_parameter', 'parentId');
        problemOf(await get('/api/v2/categories?parentId=x'), 400, 'invalid_parameter', 'parentId');
      });

      it('brands: search is a case-insensitive substring of the name', async () => {
        const expected = ids(rows.brands.filter((b) => String(b.name).toLowerCase().includes('or')));
        assert.ok(expected.length > 1);
        assert.deepEqual(sortedIds(await allIds('/api/v2/brands?search=OR')), expected);
        assert.deepEqual(await allIds('/api/v2/brands?search=%25'), []);
      });

      it('product-parameters and product-filters: productId and parameterId/filterId comma lists', async () => {
        const productIds = [Number(products()[0].id), Number(products()[7].id)];
        for (const [collection, other, column] of [['product-parameters', 'parameterId', 'parameter_id'], ['product-filters', 'filterId', 'filter_id']] as const) {
          const all = rows[collection];
          assert.deepEqual(sortedIds(await allIds(`/api/v2/${collection}?productId=${productIds.join(',')}`)), ids(all.filter((r) => productIds.includes(Number(r.product_id)))));
          const otherIds = [...new Set(all.map((r) => Number(r[column])))].slice(0, 2);
          assert.deepEqual(sortedIds(await allIds(`/api/v2/${collection}?${other}=${otherIds.join(',')}`)), ids(all.filter((r) => otherIds.includes(Number(r[column])))));
          assert.deepEqual(sortedIds(await allIds(`/api/v2/${collection}?${other}=${otherIds[0]}&productId=${productIds.join(',')}`)),
            ids(all.filter((r) => Number(r[column]) === otherIds[0] && productIds.includes(Number(r.product_id)))));
          problemOf(await get(`/api/v2/${collection}?productId=x`), 400, 'invalid_parameter', 'productId');
          problemOf(await get(`/api/v2/${collection}?${other}=`), 400, 'invalid_parameter', other);
        }
      });

      it('orders: id, number and status', async () => {
        const orders = rows.orders;
        const some = [orders[3], orders[10], orders[20]];
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?id=${ids(some).join(',')}`)), ids(some));
        assert.deepEqual(await allIds(`/api/v2/orders?number=${some[1].number}`), [Number(some[1].id)]);
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?number=${some[0].number},${some[2].number}`)), ids([some[0], some[2]]));
        assert.deepEqual(sortedIds(await allIds('/api/v2/orders?status=paid,shipped')), ids(orders.filter((o) => o.status === 'paid' || o.status === 'shipped')));
        problemOf(await get('/api/v2/orders?status=sent'), 400, 'invalid_parameter', 'status');
        problemOf(await get('/api/v2/orders?id=abc'), 400, 'invalid_parameter', 'id');
      });

      it('orders: email is exact and case-insensitive', async () => {
        const email = String(rows.orders[5].email);
        const expected = ids(rows.orders.filter((o) => String(o.email).toLowerCase() === email.toLowerCase()));
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?email=${encodeURIComponent(email.toUpperCase())}`)), expected);
        assert.deepEqual(await allIds(`/api/v2/orders?email=${encodeURIComponent(email.slice(1))}`), []);
        problemOf(await get('/api/v2/orders?email='), 400, 'invalid_parameter', 'email');
      });

      it('orders: createdFrom and createdTo are inclusive; a date-only createdTo covers the whole day', async () => {
        const orders = rows.orders;
        const day = String(orders[7].created_at).slice(0, 10);
        const onDay = ids(orders.filter((o) => String(o.created_at).startsWith(day)));
        assert.ok(onDay.length > 0);
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?createdFrom=${day}&createdTo=${day}`)), onDay);
        const stamp = String(orders[7].created_at);
        assert.ok(onDay.includes(Number(orders[7].id)));
        assert.ok((await allIds(`/api/v2/orders?createdFrom=${stamp}&createdTo=${stamp}`)).includes(Number(orders[7].id)), 'both bounds are inclusive');
        const from = String(orders[2].created_at) < String(orders[40].created_at) ? String(orders[2].created_at) : String(orders[40].created_at);
        const to = String(orders[2].created_at) < String(orders[40].created_at) ? String(orders[40].created_at) : String(orders[2].created_at);
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?createdFrom=${from}&createdTo=${to}`)),
          ids(orders.filter((o) => String(o.created_at) >= from && String(o.created_at) <= to)));
        // Without an offset a date-time is UTC; with one it is converted.
        const shifted = new Date(Date.parse(to) + 3_600_000).toISOString().replace('Z', '+01:00');
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?createdTo=${encodeURIComponent(shifted)}`)), ids(orders.filter((o) => String(o.created_at) <= to)));
        assert.deepEqual(sortedIds(await allIds(`/api/v2/orders?createdTo=${to.replace('Z', '')}`)), ids(orders.filter((o) => String(o.created_at) <= to)));
        problemOf(await get('/api/v2/orders?createdFrom=yesterday'), 400, 'invalid_parameter', 'createdFrom');
        problemOf(await get('/api/v2/orders?createdTo=2026-02-29'), 400, 'invalid_parameter', 'createdTo');
      });

      it('orders: default sort is -createdAt and createdAt sorts both ways', async () => {
        const page = await json('/api/v2/orders?limit=1000');
        assert.deepEqual(page.data.map((o) => o.id), expectedOrder(rows.orders, '-createdAt'));
        const stamps = page.data.map((o) => o.createdAt);
        assert.deepEqual(stamps, [...stamps].sort().reverse());
      });
    });
  });
}
