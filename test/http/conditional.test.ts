import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import xxhash from 'xxhash-wasm';
import { addCompression } from '../../src/http/compression.ts';
import { addConditionalRequests, noneMatchHits, parseHttpDate } from '../../src/http/conditional.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const STRONG_TAG = /^"[0-9a-f]{16}"$/;

for (const dialect of await dialects()) {
  describe(`conditional requests (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    const page = '/api/v2/products?limit=50';

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 60, orders: 5, seed: 3 } });
      token = (await t.credential(['products:read', 'brands:read', 'changes:read'])).token;
    });
    after(() => t.close());

    it('every JSON page, item and changes page carries a strong ETag and Cache-Control: private, no-cache; the same answer the same tag', async () => {
      for (const url of [page, '/api/v2/products/7', '/api/v2/brands?limit=3', '/api/v2/changes?limit=10']) {
        const first = await t.get(url, token);
        assert.equal(first.statusCode, 200, first.body);
        assert.match(String(first.headers.etag), STRONG_TAG, url);
        assert.equal(first.headers['cache-control'], 'private, no-cache', url);
        assert.equal((await t.get(url, token)).headers.etag, first.headers.etag, `${url}: computed from the answer, so stable`);
      }
    });

    it('the tag is XXH64 of the UTF-8 bytes sent, and Content-Length counts those bytes (names beyond ASCII; a page and an item)', async () => {
      const name = 'Žluťoučký kůň úpěl ďábelské ódy 🐎';
      const { h64Raw } = await xxhash();
      const created = await t.admin('POST', '/admin/api/products', { articleNumber: 'UTF8-ETAG', name, price: '10.00', currency: 'CZK', vatRate: 21, status: 'active' });
      assert.ok(created.statusCode < 300, created.body);
      const id = (JSON.parse(created.body) as { id: number }).id;
      for (const url of ['/api/v2/products?limit=100', `/api/v2/products/${id}`]) {
        const res = await t.get(url, token);
        assert.equal(res.statusCode, 200, url);
        assert.ok(res.body.includes(name), `${url} holds the name`);
        assert.equal(Number(res.headers['content-length']), res.rawPayload.length, url);
        assert.ok(res.rawPayload.length > res.body.length, `${url}: more bytes than characters`);
        assert.equal(res.headers.etag, `"${h64Raw(res.rawPayload).toString(16).padStart(16, '0')}"`, url);
        const head = await t.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${token}` } });
        assert.equal(head.statusCode, 200, url);
        assert.equal(head.rawPayload.length, 0, `${url}: HEAD has no body`);
        assert.equal(head.headers['content-length'], res.headers['content-length'], `${url}: HEAD claims GET's length`);
        assert.equal(head.headers.etag, res.headers.etag, `${url}: and its tag`);
      }
    });

    it('If-None-Match with the tag answers 304 with no body, keeping the validators, Vary, caching and rate-limit headers', async () => {
      const full = await t.get(page, token);
      const etag = String(full.headers.etag);
      const res = await t.get(page, token, { 'if-none-match': etag });
      assert.equal(res.statusCode, 304);
      assert.equal(res.rawPayload.length, 0);
      assert.equal(res.headers.etag, etag);
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.headers.vary, 'Accept, Accept-Encoding');
      assert.equal(res.headers.link, full.headers.link, 'the page still names its next page');
      assert.ok(res.headers.ratelimit && res.headers['ratelimit-policy'], 'the rate-limit headers stay');
      for (const name of ['content-type', 'content-length', 'content-encoding']) assert.equal(res.headers[name], undefined, `no ${name} on a 304`);

      const head = await t.app.inject({ method: 'HEAD', url: page, headers: { authorization: `Bearer ${token}`, 'if-none-match': etag } });
      assert.equal(head.statusCode, 304);
      assert.equal(head.headers['content-length'], undefined, 'a 304 to HEAD claims no length either');
    });

    it('If-None-Match compares weakly, in lists, with *, and across codings; another tag or a malformed one gets the full answer', async () => {
      const etag = String((await t.get(page, token)).headers.etag);
      const bare = etag.slice(1, -1);
      const hits = [`W/${etag}`, `"nope", ${etag}`, `"a,b" , W/"x",${etag}`, '*', `"${bare}-gz"`, `W/"${bare}-br"`];
      for (const header of hits) assert.equal((await t.get(page, token, { 'if-none-match': header })).statusCode, 304, header);
      const misses = ['"nope"', bare, `"${bare.slice(1)}"`, `"${bare}-zz"`, `${etag}x`];
      for (const header of misses) assert.equal((await t.get(page, token, { 'if-none-match': header })).statusCode, 200, header);
    });

    it('a changed item changes the tag of its page and of itself; the old tag then gets the full answer', async () => {
      const item = '/api/v2/products/3';
      const [pageTag, itemTag] = [String((await t.get(page, token)).headers.etag), String((await t.get(item, token)).headers.etag)];
      await t.database.store.db.updateTable('products').set({ name: `Renamed ${dialect}` }).where('id', '=', 3).execute();
      const [newPage, newItem] = [await t.get(page, token, { 'if-none-match': pageTag }), await t.get(item, token, { 'if-none-match': itemTag })];
      assert.equal(newPage.statusCode, 200);
      assert.equal(newItem.statusCode, 200);
      assert.notEqual(newPage.headers.etag, pageTag);
      assert.notEqual(newItem.headers.etag, itemTag);
      assert.equal(newItem.json().name, `Renamed ${dialect}`);
    });

    it('other filters, sorts, page sizes and fields are other answers with other tags', async () => {
      const urls = [
        page,
        '/api/v2/products?limit=50&status=active',
        '/api/v2/products?limit=50&sort=-id',
        '/api/v2/products?limit=49',
        '/api/v2/products?limit=50&fields=price',
        '/api/v2/products?limit=50&fields=price,name',
        '/api/v2/products/5',
        '/api/v2/products/5?fields=name',
      ];
      const tags = new Set<string>();
      for (const url of urls) {
        const res = await t.get(url, token);
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        tags.add(String(res.headers.etag));
      }
      assert.equal(tags.size, urls.length);
    });

    it('If-Modified-Since against the Last-Modified of a single item: 304 when not modified since, 200 once it is', async () => {
      const item = '/api/v2/products/9?fields=name';
      const first = await t.get(item, token);
      const lastModified = String(first.headers['last-modified']);
      assert.ok(parseHttpDate(lastModified), `an HTTP-date: ${lastModified}`);
      const same = await t.get(item, token, { 'if-modified-since': lastModified });
      assert.equal(same.statusCode, 304);
      assert.equal(same.rawPayload.length, 0);
      assert.equal(same.headers['last-modified'], lastModified);
      assert.equal(same.headers.etag, first.headers.etag);
      const earlier = new Date((parseHttpDate(lastModified)! - 1) * 1000).toUTCString();
      assert.equal((await t.get(item, token, { 'if-modified-since': earlier })).statusCode, 200, 'modified within the second before');
      assert.equal((await t.get(item, token, { 'if-modified-since': 'not a date' })).statusCode, 200);
      // A write at least a second later: the item is modified since the date the client has.
      await new Promise((r) => setTimeout(r, 1100));
      await t.database.store.db.updateTable('products').set({ name: 'Changed again', updated_at: new Date().toISOString() }).where('id', '=', 9).execute();
      const changed = await t.get(item, token, { 'if-modified-since': lastModified });
      assert.equal(changed.statusCode, 200, String(changed.headers['last-modified']));
      assert.equal(changed.json().name, 'Changed again');
    });

    it('an item with include= has no Last-Modified (a renamed brand leaves the item\'s date), and its ETag follows the included data', async () => {
      const item = '/api/v2/products/9?include=brand';
      const first = await t.get(item, token);
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['last-modified'], undefined);
      const brandId = first.json().brandId as number | null;
      if (brandId === null) return assert.fail('product 9 of the seeded store has a brand');
      await t.database.store.db.updateTable('brands').set({ name: 'Renamed brand' }).where('id', '=', brandId).execute();
      const again = await t.get(item, token, { 'if-none-match': String(first.headers.etag) });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().brand.name, 'Renamed brand');
    });

    it('problems, exports and other methods carry no ETag and are never 304', async () => {
      const etag = String((await t.get(page, token)).headers.etag);
      const missing = await t.get('/api/v2/products/999999', token, { 'if-none-match': '*' });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.headers.etag, undefined);
      const csv = await t.get('/api/v2/products?format=csv', token, { 'if-none-match': '*' });
      assert.equal(csv.statusCode, 200);
      assert.equal(csv.headers.etag, undefined, 'a streamed export has no body in hand to hash');
      const bad = await t.get('/api/v2/products?limit=0', token, { 'if-none-match': etag });
      assert.equal(bad.statusCode, 400);
      const token2 = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' } });
      assert.equal(token2.headers.etag, undefined);
    });
  });
}

/** The If-Modified-Since rules on a route that sets Last-Modified (the hooks are the ones app.ts registers). */
describe('If-Modified-Since', () => {
  const LAST_MODIFIED = 'Mon, 23 Nov 2026 10:00:00 GMT';
  const app = Fastify();
  before(async () => {
    await app.register(async (scope) => {
      await addCompression(scope);
      addConditionalRequests(scope);
      scope.get('/dated', async (_request, reply) => reply.header('last-modified', LAST_MODIFIED).send({ id: 1 }));
      scope.get('/undated', async () => ({ id: 2 }));
    });
    await app.ready();
  });
  after(() => app.close());
  const get = (url: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });

  it('answers 304 when not modified since (second precision, all three HTTP-date forms), 200 when modified after', async () => {
    for (const since of [LAST_MODIFIED, 'Mon, 23 Nov 2026 10:00:01 GMT', 'Monday, 23-Nov-26 10:00:00 GMT', 'Mon Nov 23 10:00:00 2026', 'Tue, 24 Nov 2026 00:00:00 GMT']) {
      const res = await get('/dated', { 'if-modified-since': since });
      assert.equal(res.statusCode, 304, since);
      assert.equal(res.headers['last-modified'], LAST_MODIFIED);
      assert.match(String(res.headers.etag), STRONG_TAG);
    }
    assert.equal((await get('/dated', { 'if-modified-since': 'Mon, 23 Nov 2026 09:59:59 GMT' })).statusCode, 200);
  });

  it('ignores a date that is no HTTP-date, the header where there is no Last-Modified, and itself when If-None-Match is present', async () => {
    for (const since of ['yesterday', '2026-11-24T00:00:00Z', 'Tue, 31 Nov 2026 00:00:00 GMT', 'Tue, 24 Nov 2026 00:00:00 CET', '']) {
      assert.equal((await get('/dated', { 'if-modified-since': since })).statusCode, 200, since);
    }
    assert.equal((await get('/undated', { 'if-modified-since': 'Tue, 24 Nov 2099 00:00:00 GMT' })).statusCode, 200);
    assert.equal((await get('/dated', { 'if-modified-since': LAST_MODIFIED, 'if-none-match': '"other"' })).statusCode, 200, 'If-None-Match decides');
  });

  it('parses HTTP-dates strictly and compares tags weakly', () => {
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), Date.UTC(1994, 10, 6, 8, 49, 37) / 1000);
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'), Date.UTC(1994, 10, 6, 8, 49, 37) / 1000);
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), Date.UTC(1994, 10, 6, 8, 49, 37) / 1000);
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37'), undefined);
    assert.equal(noneMatchHits('W/"abc", "def"', '"def"'), true);
    assert.equal(noneMatchHits('"abc" "def"', '"def"'), false, 'a list without commas is malformed');
  });
});
