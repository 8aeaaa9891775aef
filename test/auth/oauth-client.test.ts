import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientCredentials, type ModuleOptions } from 'simple-oauth2';
import { createCredential, hashingKey } from '../../src/auth/credentials.service.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { assertProblem } from '../helpers/problems.ts';

/**
 * A real OAuth 2.0 client library against a real server on loopback: every way API.md §1 lets a client
 * obtain a token, then tokens that outlive a restart and work on a second node of the same store.
 */
for (const dialect of await dialects()) {
  describe(`OAuth client credentials with simple-oauth2 (${dialect})`, () => {
    let database: TestDatabase;
    let config: Config;
    let server: RunningServer;
    let client: { clientId: string; clientSecret: string };

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: 5, seed: 1 });
      const issued = await createCredential(database.store.db, await hashingKey(database.store.db), 'oauth library', ['products:read', 'orders:read']);
      client = { clientId: issued.clientId, clientSecret: issued.clientSecret };
      config = loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN: 'oauth-client-test-admin-token-0123456789', LOG_LEVEL: 'silent' }, {});
      server = await startServer(config, { logger: false });
    });
    after(async () => {
      await server.stop();
      await database.drop();
    });

    const oauth = (url: string, options: ModuleOptions['options'], secret = client.clientSecret) =>
      new ClientCredentials({ client: { id: client.clientId, secret }, auth: { tokenHost: url, tokenPath: '/oauth/token' }, options });
    const products = (url: string, token: string) => fetch(`${url}/api/v2/products?limit=2`, { headers: { authorization: `Bearer ${token}` } });

    for (const authorizationMethod of ['header', 'body'] as const) {
      for (const bodyFormat of ['form', 'json'] as const) {
        it(`obtains a token with client authentication in the ${authorizationMethod}, body as ${bodyFormat}`, async () => {
          const token = await oauth(server.url, { authorizationMethod, bodyFormat }).getToken({});
          assert.equal(token.token.token_type, 'Bearer');
          assert.equal(token.token.expires_in, 7200);
          assert.equal(token.token.scope, 'products:read orders:read');
          assert.equal(token.expired(), false);
          const res = await products(server.url, token.token.access_token);
          assert.equal(res.status, 200);
          const body = await res.json() as { data: Array<{ id: number }>; pagination: { limit: number } };
          assert.equal(body.data.length, 2);
          assert.equal(body.pagination.limit, 2);
          assert.match(String(res.headers.get('ratelimit')), /r=\d+/);
        });
      }
    }

    it('obtains a token with multipart/form-data (as the original documentation shows)', async () => {
      const form = new FormData();
      form.set('grant_type', 'client_credentials');
      form.set('client_id', client.clientId);
      form.set('client_secret', client.clientSecret);
      const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', body: form });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = await res.json() as { access_token: string; scope: string };
      assert.equal((await products(server.url, body.access_token)).status, 200);
    });

    it('answers malformed token requests with RFC 6749 errors, never a 5xx', async () => {
      const post = (body: string, type: string) => fetch(`${server.url}/oauth/token`, { method: 'POST', body, headers: { 'content-type': type } });
      for (const [body, type] of [
        [JSON.stringify({ grant_type: 'client_credentials', client_id: 'a\u0000b', client_secret: 'x' }), 'application/json'],
        ['grant_type=client_credentials&client_id=a%00b&client_secret=x', 'application/x-www-form-urlencoded'],
        ['{"grant_type":', 'application/json'],
        ['grant_type=client_credentials', 'text/plain'],
      ]) {
        const res = await post(body, type);
        assert.ok(res.status === 400 || res.status === 401, `${body}: ${res.status}`);
        assert.match((await res.json() as { error: string }).error, /^invalid_(request|client)$/);
      }
    });

    it('narrows the scope on request and refuses scopes not granted', async () => {
      const narrow = await oauth(server.url, {}).getToken({ scope: ['orders:read'] });
      assert.equal(narrow.token.scope, 'orders:read');
      const refused = await products(server.url, narrow.token.access_token);
      assertProblem(refused, await refused.text(), 403, 'insufficient_scope');
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="store-api", error="insufficient_scope", scope="products:read"');
      const orders = await fetch(`${server.url}/api/v2/orders`, { headers: { authorization: `Bearer ${narrow.token.access_token}` } });
      assert.equal(orders.status, 200);
      await assert.rejects(oauth(server.url, {}).getToken({ scope: 'brands:read' }), (e: { output?: { statusCode: number }; data?: { payload?: { error?: string } } }) => {
        assert.equal(e.output?.statusCode, 400);
        assert.equal(e.data?.payload?.error, 'invalid_scope');
        return true;
      });
      await assert.rejects(oauth(server.url, { authorizationMethod: 'header' }, 'sds_wrong').getToken({}), (e: { output?: { statusCode: number; headers: Record<string, string> }; data?: { payload?: { error?: string } } }) => {
        assert.equal(e.output?.statusCode, 401);
        assert.equal(e.data?.payload?.error, 'invalid_client');
        return true;
      });
    });

    it('tokens survive a restart and work on a second node of the same store', async () => {
      const token = (await oauth(server.url, {}).getToken({})).token.access_token;
      await server.stop();
      server = await startServer(config, { logger: false });
      assert.equal((await products(server.url, token)).status, 200, 'after a restart');
      const second = await startServer(config, { logger: false });
      try {
        assert.notEqual(second.url, server.url);
        assert.equal((await products(second.url, token)).status, 200, 'on a second node');
        const fromSecond = (await oauth(second.url, { authorizationMethod: 'body', bodyFormat: 'json' }).getToken({})).token.access_token;
        assert.equal((await products(server.url, fromSecond)).status, 200, 'a token of the second node on the first');
      } finally {
        await second.stop();
      }
    });
  });
}
