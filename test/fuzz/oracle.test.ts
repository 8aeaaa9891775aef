// The fuzz suite is only as good as its oracle: real answers of the app pass it, and the same answers with
// one thing wrong (a 5xx, a field off its schema, an error that is not a problem) fail it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { operationsOf, type OpenApiDocument, type OperationRef } from './document.ts';
import { Oracle, type Answer } from './oracle.ts';

const answerOf = (res: { statusCode: number; headers: Record<string, unknown>; body: string }): Answer => ({ statusCode: res.statusCode, headers: { ...res.headers }, body: res.body });

for (const dialect of await dialects()) {
  describe(`fuzz oracle (${dialect})`, () => {
    let t: TestApp;
    let oracle: Oracle;
    let ops: OperationRef[];
    let token: string;
    const op = (method: string, path: string): OperationRef => ops.find((o) => o.method === method && o.path === path)!;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3 } });
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as OpenApiDocument;
      oracle = new Oracle(doc);
      ops = operationsOf(doc);
      token = (await t.credential(ALL_SCOPES)).token;
    });
    after(() => t.close());

    it('passes a real 2xx and flags it when a field is off its schema, the status undocumented or the media type wrong', async () => {
      const item = op('GET', '/api/v2/products/{id}');
      const ok = answerOf(await t.get('/api/v2/products/1', token));
      assert.equal(ok.statusCode, 200);
      assert.equal(oracle.check(item, ok), undefined);
      const body = JSON.parse(ok.body) as Record<string, unknown>;
      assert.match(oracle.check(item, { ...ok, body: JSON.stringify({ ...body, price: 12.5 }) }) ?? '', /off its schema/);
      assert.match(oracle.check(item, { ...ok, body: JSON.stringify({ ...body, id: '1' }) }) ?? '', /off its schema/);
      assert.match(oracle.check(item, { ...ok, body: JSON.stringify({ ...body, updatedAt: 'yesterday' }) }) ?? '', /off its schema/);
      assert.match(oracle.check(item, { ...ok, statusCode: 202 }) ?? '', /does not list/);
      assert.match(oracle.check(item, { ...ok, headers: { ...ok.headers, 'content-type': 'text/html' } }) ?? '', /not one of/);
    });

    it('holds an answer to `fields=` to the asked properties, which the full item\'s schema would not pass', async () => {
      const item = op('GET', '/api/v2/products/{id}');
      const list = op('GET', '/api/v2/products');
      const url = '/api/v2/products/1?fields=name,brand.name&include=brand';
      const trimmed = answerOf(await t.get(url, token));
      assert.equal(trimmed.statusCode, 200);
      const body = JSON.parse(trimmed.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['brand', 'id', 'name']);
      assert.equal(oracle.check(item, trimmed, url), undefined);
      // Without the request's query it is a full item missing its properties.
      assert.match(oracle.check(item, trimmed) ?? '', /off its schema: .*required property/);
      assert.match(oracle.check(item, { ...trimmed, body: JSON.stringify({ ...body, price: '1.00' }) }, url) ?? '', /`price`, which `fields` did not ask for/);
      assert.match(oracle.check(item, { ...trimmed, body: JSON.stringify({ ...body, id: undefined }) }, url) ?? '', /required property 'id'/);
      const pageUrl = '/api/v2/products?fields=name&limit=2';
      const page = answerOf(await t.get(pageUrl, token));
      assert.equal(page.statusCode, 200);
      assert.equal(oracle.check(list, page, pageUrl), undefined);
      const pageBody = JSON.parse(page.body) as { data: Array<Record<string, unknown>> };
      pageBody.data[1].sku = 'x';
      assert.match(oracle.check(list, { ...page, body: JSON.stringify(pageBody) }, pageUrl) ?? '', /`sku`, which `fields` did not ask for/);
    });

    it('flags every 5xx, whatever its body', async () => {
      const list = op('GET', '/api/v2/products');
      const problem = answerOf(await t.get('/api/v2/products?limit=0', token));
      assert.equal(oracle.check(list, problem), undefined);
      assert.match(oracle.check(list, { ...problem, statusCode: 500 }) ?? '', /answered 500/);
      assert.match(oracle.check(list, { ...problem, statusCode: 503 }) ?? '', /answered 503/);
    });

    it('passes a real problem and flags an error that is not one', async () => {
      const item = op('GET', '/api/v2/products/{id}');
      const missing = answerOf(await t.get('/api/v2/products/999999', token));
      assert.equal(missing.statusCode, 404);
      assert.equal(oracle.check(item, missing), undefined);
      assert.match(oracle.check(item, { ...missing, headers: { ...missing.headers, 'content-type': 'application/json' } }) ?? '', /not application\/problem\+json/);
      const body = JSON.parse(missing.body) as Record<string, unknown>;
      assert.match(oracle.check(item, { ...missing, body: JSON.stringify({ ...body, requestId: undefined }) }) ?? '', /off its schema/);
      assert.match(oracle.check(item, { ...missing, body: JSON.stringify({ ...body, requestId: 'other' }) }) ?? '', /requestId/);
      assert.match(oracle.check(item, { ...missing, body: JSON.stringify({ ...body, status: 400 }) }) ?? '', /status 400/);
      assert.match(oracle.check(item, { ...missing, body: JSON.stringify({ error: 'Not Found', statusCode: 404 }) }) ?? '', /off its schema/);
      assert.match(oracle.check(item, { ...missing, body: JSON.stringify({ ...body, detail: 'at Object.<anonymous> (/srv/src/x.ts:12:3)' }) }) ?? '', /leaks/);
    });

    it('holds the token endpoint to RFC 6749 error bodies, not problems', async () => {
      const tokenOp = op('POST', '/oauth/token');
      const refused = answerOf(await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' } }));
      assert.equal(refused.statusCode, 401);
      assert.equal(oracle.check(tokenOp, refused), undefined);
      assert.match(oracle.check(tokenOp, { ...refused, body: '{"message":"no"}' }) ?? '', /without an `error` code/);
      assert.match(oracle.check(tokenOp, { ...refused, body: '{"error":"made_up"}' }) ?? '', /off its schema/);
    });
  });
}
