// The typed client against a real server on loopback, both dialects: it walks every page of a filtered
// listing and gets exactly what the REST API lists, gets one item, downloads a CSV export as a stream, turns
// problems into StoreApiError, and renews its token before expiry and when the API refuses one.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createStoreClient, StoreApiError, type StoreClient } from '../../src/client/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { sleep } from '../helpers/wait.ts';

/** A real fetch that remembers what it sent and what came back (method, path with query, status). */
function recordingFetch() {
  const calls: Array<{ method: string; url: URL; status: number }> = [];
  const fetchImpl = async (request: Request) => {
    const response = await fetch(request);
    calls.push({ method: request.method, url: new URL(request.url), status: response.status });
    return response;
  };
  return { calls, fetchImpl };
}

async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

for (const dialect of await dialects()) {
  describe(`the typed client over loopback HTTP (${dialect})`, () => {
    let t: TestApp;
    let baseUrl: string;
    let credential: { clientId: string; clientSecret: string; token: string };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 240, orders: 5 } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      credential = await t.credential(['products:read', 'orders:read', 'brands:read']);
    });
    after(() => t.close());

    const client = (fetchImpl?: (r: Request) => Promise<Response>): StoreClient =>
      createStoreClient({ baseUrl, clientId: credential.clientId, clientSecret: credential.clientSecret, fetch: fetchImpl });

    it('walks every page of a filtered listing and gets exactly the ids the REST API lists', async () => {
      const rest = await t.get('/api/v2/products?status=active&sort=-updatedAt&limit=1000', credential.token);
      const expected = (rest.json().data as Array<{ id: number }>).map((p) => p.id);
      assert.ok(expected.length > 40, `enough active products for several pages (${expected.length})`);

      const { calls, fetchImpl } = recordingFetch();
      const seen: number[] = [];
      for await (const product of client(fetchImpl).list('products', { query: { status: 'active', sort: '-updatedAt', limit: 17 } })) {
        assert.equal(product.status, 'active');
        seen.push(product.id);
      }
      assert.deepEqual(seen, expected);
      const pageCalls = calls.filter((c) => c.url.pathname === '/api/v2/products');
      assert.equal(pageCalls.length, Math.ceil(expected.length / 17));
      assert.equal(calls.filter((c) => c.url.pathname === '/oauth/token').length, 1, 'one token for the whole walk');
      // Each page after the first carries the cursor with the same filters and page size.
      for (const c of pageCalls.slice(1)) {
        assert.ok(c.url.searchParams.get('cursor'));
        assert.equal(c.url.searchParams.get('status'), 'active');
        assert.equal(c.url.searchParams.get('limit'), '17');
      }

      let pages = 0;
      for await (const page of client().pages('products', { query: { status: 'active', limit: 100 } })) {
        pages++;
        assert.ok(page.data.length <= 100);
        if (page.pagination.hasMore) assert.ok(page.pagination.nextCursor);
      }
      assert.equal(pages, Math.ceil(expected.length / 100));
    });

    it('gets one item, equal to the REST answer', async () => {
      const rest = (await t.get('/api/v2/products/5', credential.token)).json();
      const product = await client().get('products', 5);
      assert.deepEqual(product, rest);
      const order = await client().get('orders', 1);
      assert.equal(order.id, 1);
      assert.ok(Array.isArray(order.items));
    });

    it('downloads a whole CSV export as a stream', async () => {
      const rest = await t.get('/api/v2/products?status=draft&limit=1000', credential.token);
      const ids = (rest.json().data as Array<{ id: number }>).map((p) => p.id);
      const stream = await client().export('products', { format: 'csv', query: { status: 'draft' } });
      assert.ok(stream instanceof ReadableStream);
      const lines = (await textOf(stream)).trim().split(/\r?\n/);
      const header = lines[0].split(',');
      assert.equal(header[0], 'id');
      assert.deepEqual(lines.slice(1).map((line) => Number(line.split(',')[0])), ids);
    });

    it('throws a typed StoreApiError for a 404 and for a bad parameter', async () => {
      const missing = await client().get('products', 987654).then(
        () => assert.fail('no product 987654'),
        (e: unknown) => e,
      );
      assert.ok(missing instanceof StoreApiError);
      assert.equal(missing.status, 404);
      assert.equal(missing.code, 'not_found');
      assert.match(missing.detail, /987654/);
      assert.match(missing.requestId ?? '', /\S/);
      assert.match(missing.type ?? '', /\/problems\/not-found$/);

      const bad = await client().list('products', { query: { limit: 0 } }).next().then(
        () => assert.fail('limit=0 is refused'),
        (e: unknown) => e,
      );
      assert.ok(bad instanceof StoreApiError);
      assert.equal(bad.status, 400);
      assert.equal(bad.code, 'invalid_parameter');
      assert.ok(bad.errors.some((e) => e.name === 'limit'), JSON.stringify(bad.errors));

      const wrongSecret = createStoreClient({ baseUrl, clientId: credential.clientId, clientSecret: 'not-the-secret' });
      const refused = await wrongSecret.get('products', 1).then(
        () => assert.fail('a wrong secret gets no token'),
        (e: unknown) => e,
      );
      assert.ok(refused instanceof StoreApiError);
      assert.equal(refused.status, 401);
      assert.equal(refused.code, 'invalid_client');
    });

    it('renews a token the API refuses (401) once, and the call succeeds', async () => {
      const { calls, fetchImpl } = recordingFetch();
      const c = client(fetchImpl);
      await c.get('products', 1);
      // The API stops accepting every token of the credential (as after expiry, seen from a skewed clock).
      await t.ctx.store.db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
      const credentialId = Number((await t.ctx.store.db.selectFrom('credentials').select('id').where('client_id', '=', credential.clientId).executeTakeFirstOrThrow()).id);
      t.ctx.tokens.forget(credentialId);
      const product = await c.get('products', 2);
      assert.equal(product.id, 2);
      assert.deepEqual(calls.map((x) => `${x.method} ${x.url.pathname} ${x.status}`), [
        'POST /oauth/token 200',
        'GET /api/v2/products/1 200',
        'GET /api/v2/products/2 401',
        'POST /oauth/token 200',
        'GET /api/v2/products/2 200',
      ]);
      credential = await t.credential(['products:read', 'orders:read', 'brands:read']);
    });
  });

  describe(`the typed client renews a token before it expires (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3 }, env: { TOKEN_TTL_SECONDS: '2' } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => t.close());

    it('asks for a new token when the old one nears its end, with no 401 on the way', async () => {
      const { clientId, clientSecret } = await t.credential(['products:read']);
      const { calls, fetchImpl } = recordingFetch();
      const c = createStoreClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/`, clientId, clientSecret, fetch: fetchImpl });
      await c.get('products', 1);
      await sleep(2100);
      await c.get('products', 2);
      assert.deepEqual(calls.map((x) => `${x.method} ${x.url.pathname} ${x.status}`), [
        'POST /oauth/token 200',
        'GET /api/v2/products/1 200',
        'POST /oauth/token 200',
        'GET /api/v2/products/2 200',
      ]);
    });
  });
}
