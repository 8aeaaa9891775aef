import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { after, before, describe, it } from 'node:test';
import { addBearerGuard } from '../../src/auth/bearer.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

for (const dialect of await dialects()) {
  describe(`a route under the bearer guard must declare its scope (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    /** An app guarded like /api/v2, with the routes `add` declares. */
    const guarded = (add: (api: FastifyInstance) => void) => {
      const app = Fastify({ logger: false });
      registerErrorHandling(app, 'http://store.test');
      void app.register(async (api) => {
        addBearerGuard(api, t.ctx);
        add(api);
      }, { prefix: '/api/v2' });
      return app;
    };

    it('refuses to start with a route that declares no scope', async () => {
      const app = guarded((api) => {
        api.get('/forgotten', async () => ({ secret: true }));
      });
      await assert.rejects(async () => app.ready(), /GET \/api\/v2\/forgotten declares no scope/);
      await app.close();
    });

    it('refuses the same route when only its config is there without a scope', async () => {
      const app = guarded((api) => {
        api.get('/forgotten', { config: { ratePolicy: 'ai' } }, async () => ({ secret: true }));
      });
      await assert.rejects(async () => app.ready(), /declares no scope/);
      await app.close();
    });

    it('serves a route declared open to any valid token (scope: null), and still asks for a token', async () => {
      const app = guarded((api) => {
        api.get('/whoami', { config: { scope: null } }, async (request) => ({ clientId: request.grant?.clientId }));
      });
      await app.ready();
      const { token, clientId } = await t.credential(['orders:read']);
      const ok = await app.inject({ method: 'GET', url: '/api/v2/whoami', headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().clientId, clientId);
      const anonymous = await app.inject({ method: 'GET', url: '/api/v2/whoami' });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().code, 'invalid_token');
      await app.close();
    });

    it('holds a declared scope (and HEAD, which Fastify adds for GET, holds it too)', async () => {
      const app = guarded((api) => {
        api.get('/orders-only', { config: { scope: 'orders:read' } }, async () => ({ ok: true }));
      });
      await app.ready();
      const orders = await t.credential(['orders:read']);
      const brands = await t.credential(['brands:read']);
      for (const method of ['GET', 'HEAD'] as const) {
        assert.equal((await app.inject({ method, url: '/api/v2/orders-only', headers: { authorization: `Bearer ${orders.token}` } })).statusCode, 200);
        const refused = await app.inject({ method, url: '/api/v2/orders-only', headers: { authorization: `Bearer ${brands.token}` } });
        assert.equal(refused.statusCode, 403, method);
        assert.match(String(refused.headers['www-authenticate']), /insufficient_scope.*scope="orders:read"/);
      }
      await app.close();
    });
  });
}
