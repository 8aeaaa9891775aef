import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; minimum?: number; maximum?: number; $ref?: string };
interface Parameter { name: string; in: string; schema?: Schema }
interface Operation { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }

// One past the largest bigint, the largest bigint, and one past JSON's exact integers: none names a row.
const TOO_LARGE = ['9223372036854775808', '9223372036854775807', '9007199254740993'];
const isInteger = (s: Schema | undefined) => s?.type === 'integer' || (Array.isArray(s?.type) && s.type.includes('integer'));

/**
 * Every operation of the live OpenAPI document, every path and query parameter: an integer beyond what the
 * database holds and a NUL character are a 400 problem naming the parameter, on both databases (PostgreSQL
 * failed them as 500s: bigint out of range, NUL in text). Every integer field of a JSON body likewise.
 */
for (const dialect of await dialects()) {
  describe(`integers out of range and NUL characters (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let webhookId: number;
    let operations: Array<{ method: string; path: string; op: Operation }>;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 2, orders: 1, seed: 2 }, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      token = (await t.credential([...ALL_SCOPES] as Scope[])).token;
      const hook = await t.admin('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
      assert.equal(hook.statusCode, 201, hook.body);
      webhookId = Number(hook.json().id);
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
      operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).filter(([m]) => ['get', 'post', 'patch', 'delete', 'put'].includes(m)).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));
      assert.ok(operations.length > 30, 'the document lists the operations');
    });
    after(() => t.close());

    const send = (method: string, url: string, payload?: unknown) => t.app.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: { authorization: `Bearer ${url.startsWith('/admin/') ? ADMIN_TOKEN : token}` },
    });
    /** The path with `tested` set to `value` and the other parameters to things that exist. */
    const pathOf = (path: string, tested: string | undefined, value: string) =>
      path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === tested ? value : name === 'id' && path.startsWith('/admin/api/webhooks') ? String(webhookId) : '1'));

    it('path and query parameters', async () => {
      let checked = 0;
      for (const { method, path, op } of operations) {
        const body = method === 'POST' || method === 'PATCH' || method === 'PUT' ? {} : undefined;
        for (const p of op.parameters ?? []) {
          if (p.in !== 'path' && p.in !== 'query') continue;
          const urlWith = (value: string) => (p.in === 'path' ? pathOf(path, p.name, value) : `${pathOf(path, undefined, '')}?${p.name}=${value}`);
          const nul = await send(method, urlWith('%00'), body);
          problemOf(nul, 400, 'invalid_parameter', p.name);
          checked++;
          for (const value of TOO_LARGE) {
            const res = await send(method, urlWith(value), body);
            assert.ok(res.statusCode < 500, `${method} ${urlWith(value)}: ${res.statusCode} ${res.body}`);
            if (isInteger(p.schema)) problemOf(res, 400, 'invalid_parameter', p.name);
            else if (res.statusCode >= 400) assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
            checked++;
          }
        }
      }
      assert.ok(checked > 100, `${checked} requests`);
    });

    it('integer fields of JSON bodies', async () => {
      let checked = 0;
      for (const { method, path, op } of operations) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        for (const [field, s] of Object.entries(schema?.properties ?? {})) {
          if (!isInteger(s)) continue;
          assert.ok(s.maximum !== undefined && s.maximum <= Number.MAX_SAFE_INTEGER, `${method} ${path}: ${field} has no maximum the database can hold`);
          for (const value of TOO_LARGE) {
            // Raw JSON text: the number must reach the server as written.
            const res = await t.app.inject({
              method: method as 'POST', url: pathOf(path, undefined, ''), payload: `{"${field}": ${value}}`,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${path.startsWith('/admin/') ? ADMIN_TOKEN : token}` },
            });
            problemOf(res, 400, 'invalid_body', field);
            checked++;
          }
        }
      }
      assert.ok(checked >= 15, `${checked} requests`);
    });

    it('the cases of the report', async () => {
      problemOf(await send('GET', `/admin/api/webhooks/${webhookId}/deliveries/9223372036854775808`), 400, 'invalid_parameter', 'delivery');
      problemOf(await send('GET', `/admin/api/webhooks/${webhookId}/deliveries/%00`), 400, 'invalid_parameter', 'delivery');
      problemOf(await send('GET', `/admin/api/webhooks/${webhookId}/deliveries/msg_%00`), 400, 'invalid_parameter', 'delivery');
      problemOf(await send('POST', `/admin/api/webhooks/${webhookId}/replay`, { delivery: '9223372036854775808' }), 400, 'invalid_body', 'delivery');
      problemOf(await send('POST', '/api/v2/ai/generate', { task: 'product-description', productId: 9223372036854775808 }), 400, 'invalid_body', 'productId');
      // In range and well formed, but naming nothing: 404.
      problemOf(await send('GET', `/admin/api/webhooks/${webhookId}/deliveries/999999999999999`), 404, 'not_found');
      problemOf(await send('GET', `/admin/api/webhooks/${webhookId}/deliveries/msg_none`), 404, 'not_found');
    });
  });
}
