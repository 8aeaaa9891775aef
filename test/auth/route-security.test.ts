import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertToken } from '../../src/auth/credentials.repository.ts';
import { createCredential } from '../../src/auth/credentials.service.ts';
import { ALL_SCOPES, type Scope } from '../../src/auth/scopes.ts';
import { keyedHash } from '../../src/auth/secrets.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

interface Route {
  method: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  scope?: Scope;
  /** Any one of several scopes opens it (checked per job by test/snapshots/). */
  anyOf?: boolean;
}

const INVALID = 'Bearer realm="store-api", error="invalid_token"';
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

/**
 * Every route of the OpenAPI document under a prefix, with the scope it declares. The public routes must
 * include the list and item routes of every resource in the registry; anything else found (the changes feed,
 * text generation) is checked the same way.
 */
async function routesOf(t: TestApp, prefix: string): Promise<Route[]> {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: Array<Record<string, string[]>> }>>;
  };
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix)) continue;
    for (const [method, op] of Object.entries(operations)) {
      const alternatives = (op.security ?? []).filter((s) => s.oauth2);
      // Routes any of several scopes opens (snapshots: the collection named by the body or the job decides)
      // are checked by test/snapshots/; here only their 401s, under the first alternative.
      const scope = alternatives[0]?.oauth2[0] as Scope | undefined;
      routes.push({ method: method.toUpperCase() as Route['method'], path, scope, anyOf: alternatives.length > 1 });
    }
  }
  return routes;
}

for (const dialect of await dialects()) {
  describe(`security of every route (${dialect})`, () => {
    let t: TestApp;
    let publicRoutes: Route[];
    let adminRoutes: Route[];
    const full = new Map<string, string>();
    const without = new Map<string, string>();
    let expired: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 5, orders: 2, seed: 1 } });
      publicRoutes = await routesOf(t, '/api/v2/');
      adminRoutes = await routesOf(t, '/admin/api/');
      for (const scope of new Set(publicRoutes.map((r) => r.scope))) {
        assert.ok(scope, 'every /api/v2 route declares the scope it needs');
        full.set(scope, (await t.credential([scope])).token);
        without.set(scope, (await t.credential(ALL_SCOPES.filter((s) => s !== scope))).token);
      }
      // A token whose two hours are over.
      const issued = await createCredential(t.database.store.db, t.ctx.hashKey, 'old', [...ALL_SCOPES]);
      expired = 'sdt_expired-token-for-the-test';
      await insertToken(t.database.store.db, {
        token_hash: keyedHash(t.ctx.hashKey, expired), credential_id: issued.id, scopes: ALL_SCOPES.join(' '),
        expires_at: new Date(Date.now() - 1000).toISOString(), created_at: new Date(Date.now() - 7_201_000).toISOString(),
      });
    });
    after(() => t.close());

    it('the route list covers the list and item routes of every resource', () => {
      for (const def of RESOURCES) {
        assert.ok(publicRoutes.some((r) => r.method === 'GET' && r.path === `/api/v2/${def.collection}` && r.scope === def.scope), def.collection);
        assert.ok(publicRoutes.some((r) => r.method === 'GET' && r.path === `/api/v2/${def.collection}/{id}` && r.scope === def.scope), `${def.collection}/{id}`);
      }
      assert.ok(adminRoutes.length >= RESOURCES.length * 3 + 5);
    });

    const call = (route: Route, headers: Record<string, string>) =>
      t.app.inject({ method: route.method, url: concrete(route.path), headers, ...(route.method === 'POST' || route.method === 'PATCH' ? { payload: {} } : {}) });

    it('refuses a missing, malformed, unknown or expired token with 401 invalid_token', async () => {
      for (const route of publicRoutes) {
        const cases: Array<Record<string, string>> = [
          {},
          { authorization: '' },
          { authorization: 'Bearer' },
          { authorization: 'Bearer ' },
          { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
          { authorization: `Token ${full.get(route.scope!)}` },
          { authorization: `Bearer ${full.get(route.scope!)} extra` },
          { authorization: 'Bearer sdt_this-token-was-never-issued' },
          { authorization: 'Bearer "quoted"' },
          { authorization: `Bearer ${expired}` },
        ];
        for (const headers of cases) {
          const res = await call(route, headers);
          const label = `${route.method} ${route.path} with ${JSON.stringify(headers)}`;
          assert.equal(res.statusCode, 401, `${label}: ${res.body}`);
          assert.ok(String(res.headers['www-authenticate']).startsWith(INVALID), `${label}: ${res.headers['www-authenticate']}`);
          // A HEAD answer has the problem's headers but no body (RFC 9110 §9.3.2).
          if (route.method === 'HEAD') assert.match(String(res.headers['content-type']), /^application\/problem\+json/, label);
          else problemOf(res, 401, 'invalid_token');
        }
      }
    });

    it('refuses a token without the route\'s scope with 403 insufficient_scope naming it', async () => {
      for (const route of publicRoutes.filter((r) => !r.anyOf)) {
        const res = await call(route, { authorization: `Bearer ${without.get(route.scope!)}` });
        assert.equal(res.headers['www-authenticate'], `Bearer realm="store-api", error="insufficient_scope", scope="${route.scope}"`);
        // A HEAD answer has the problem's status and headers but no body (RFC 9110 §9.3.2).
        if (route.method === 'HEAD') {
          assert.equal(res.statusCode, 403, `${route.method} ${route.path}`);
          continue;
        }
        const problem = problemOf(res, 403, 'insufficient_scope');
        assert.ok(problem.detail.includes(route.scope!), problem.detail);
      }
    });

    it('lets a token with the scope through (the scheme name is case-insensitive)', async () => {
      for (const route of publicRoutes) {
        for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
          const res = await call(route, { authorization: `${scheme} ${full.get(route.scope!)}` });
          assert.ok(![401, 403, 500].includes(res.statusCode), `${route.method} ${route.path}: ${res.statusCode} ${res.body}`);
        }
      }
    });

    it('answers every admin route without the admin token with 401', async () => {
      const apiToken = full.get('products:read')!;
      for (const route of adminRoutes) {
        const cases: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-admin-token' }, { authorization: `Bearer ${apiToken}` }, { authorization: 'Basic dGVzdC1hZG1pbi10b2tlbjo=' }];
        for (const headers of cases) {
          const res = await call(route, headers);
          problemOf(res, 401, 'invalid_token');
          assert.match(String(res.headers['www-authenticate']), /^Bearer realm="store-api-admin", error="invalid_token"/);
        }
      }
    });

    it('keeps a sane caller x-request-id, replaces an insane one, and never leaks internals', async () => {
      const route = publicRoutes[0];
      const mine = await call(route, { 'x-request-id': 'erp-trace.42:abc' });
      assert.equal(mine.headers['x-request-id'], 'erp-trace.42:abc');
      assert.equal(problemOf(mine, 401, 'invalid_token').requestId, 'erp-trace.42:abc');
      const insane = await call(route, { 'x-request-id': 'has spaces and "quotes"' });
      assert.match(String(insane.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      problemOf(insane, 401, 'invalid_token');
      const ok = await t.get('/api/v2/products/1', full.get('products:read')!);
      assert.equal(ok.statusCode, 200);
      assert.ok(ok.headers['x-request-id']);
    });

    it('answers unknown routes and methods with problems too', async () => {
      problemOf(await t.app.inject({ method: 'GET', url: '/api/v2/nothing-here' }), 404, 'not_found');
      const put = await t.app.inject({ method: 'PUT', url: '/api/v2/products' });
      problemOf(put, 405, 'method_not_allowed');
      assert.match(String(put.headers.allow), /GET/);
    });
  });
}
