import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findCredentialByClientId, insertToken } from '../../src/auth/credentials.repository.ts';
import { ALL_SCOPES, scopeCatalogue } from '../../src/auth/scopes.ts';
import { keyedHash } from '../../src/auth/secrets.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { assertProblem } from '../helpers/problems.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer } from 'node:net';
import { connect, INITIALIZE, listen, rpc } from './client.ts';

/** A free loopback port, so that the app's PUBLIC_URL can be its real address (the SDK checks the metadata's `resource` against it). */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const METADATA = 'resource_metadata="http://store.test/.well-known/oauth-protected-resource"';

/** A 401 problem whose challenge leads an MCP client to the protected-resource metadata (RFC 9728 §5.1). */
async function refused(res: Response): Promise<void> {
  assert.equal(res.status, 401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer /);
  assert.ok(challenge.includes(METADATA), challenge);
  assert.ok(challenge.includes('error="invalid_token"'), challenge);
  assertProblem(res, await res.text(), 401, 'invalid_token');
}

for (const dialect of await dialects()) {
  describe(`/mcp authentication, discovery and rate limit (${dialect})`, () => {
    let t: TestApp;
    let base: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3, seed: 1 } });
      base = await listen(t);
    });
    after(() => t.close());

    it('serves the RFC 9728 protected-resource metadata without a token', async () => {
      const res = await fetch(`${base}/.well-known/oauth-protected-resource`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), {
        resource: 'http://store.test/mcp',
        resource_name: 'Store Data API (Model Context Protocol)',
        authorization_servers: ['http://store.test'],
        scopes_supported: Object.keys(scopeCatalogue(t.ctx.resources)),
        bearer_methods_supported: ['header'],
        resource_documentation: 'http://store.test/docs',
      });
    });

    it('serves the RFC 8414 authorization-server metadata of /oauth/token without a token', async () => {
      const res = await fetch(`${base}/.well-known/oauth-authorization-server`);
      assert.equal(res.status, 200);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(doc, {
        issuer: 'http://store.test',
        authorization_endpoint: 'http://store.test/oauth/authorize',
        token_endpoint: 'http://store.test/oauth/token',
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [...ALL_SCOPES],
        response_types_supported: [],
        service_documentation: 'http://store.test/docs',
      });
    });

    it('the authorization endpoint it must name only refuses (RFC 6749 §4.1.2.1)', async () => {
      const res = await fetch(`${base}/oauth/authorize?response_type=code&client_id=x&redirect_uri=https://evil.example/`, { redirect: 'manual' });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
      assert.equal(((await res.json()) as { error: string }).error, 'unsupported_response_type');
    });

    it('the authorization-server metadata tells the truth: both client authentication methods get a token', async () => {
      const c = await t.credential(['products:read']);
      const post = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=client_credentials&client_id=${c.clientId}&client_secret=${c.clientSecret}` });
      assert.equal(post.status, 200);
      const basic = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      assert.equal(basic.status, 200);
    });

    it('refuses a missing or malformed token with 401 and the resource_metadata challenge', async () => {
      await refused(await rpc(base, undefined, INITIALIZE));
      await refused(await rpc(base, 'not a token', INITIALIZE));
      await refused(await rpc(base, 'sdt_unknown-token-0123456789', INITIALIZE));
    });

    it('refuses an expired token', async () => {
      const c = await t.credential(['products:read']);
      const credential = await findCredentialByClientId(t.database.store.db, c.clientId);
      const expired = 'sdt_expired-token-for-the-mcp-test';
      await insertToken(t.database.store.db, {
        token_hash: keyedHash(t.ctx.hashKey, expired), credential_id: credential!.id, scopes: 'products:read',
        expires_at: new Date(Date.now() - 1000).toISOString(), created_at: new Date(Date.now() - 7_201_000).toISOString(),
      });
      await refused(await rpc(base, expired, INITIALIZE));
    });

    it('refuses the token of a credential disabled by the administrator, at once, even to a connected client', async () => {
      const c = await t.credential(['products:read']);
      const client = await connect(base, c.token);
      assert.ok((await client.listTools()).tools.length > 0);
      const credential = await findCredentialByClientId(t.database.store.db, c.clientId);
      assert.equal((await t.admin('PATCH', `/admin/api/credentials/${credential!.id}`, { enabled: false })).statusCode, 200);
      await refused(await rpc(base, c.token, INITIALIZE));
      await assert.rejects(client.listTools(), /401|Unauthorized/i);
      await client.close();
    });

    it('the SDK client cannot connect with a bad token', async () => {
      await assert.rejects(connect(base, 'sdt_unknown-token-0123456789'), /401|Unauthorized/i);
    });

    it('answers GET and DELETE with 405 (stateless: no stream, no session) and initialize without a session id', async () => {
      const { token } = await t.credential(['products:read']);
      for (const method of ['GET', 'DELETE']) {
        const res = await rpc(base, token, undefined, method);
        assert.equal(res.status, 405, method);
        assert.equal(res.headers.get('allow'), 'POST');
        assertProblem(res, await res.text(), 405, 'method_not_allowed');
      }
      const init = await rpc(base, token, INITIALIZE);
      assert.equal(init.status, 200);
      assert.equal(init.headers.get('mcp-session-id'), null);
      assert.ok(init.headers.get('x-request-id'));
      const body = (await init.json()) as { result: { serverInfo: { name: string }; capabilities: { tools?: object } } };
      assert.equal(body.result.serverInfo.name, 'store-data-api');
      assert.ok(body.result.capabilities.tools);
    });
  });

  describe(`/mcp draws from the credential's bucket (${dialect})`, () => {
    let t: TestApp;
    let base: string;

    before(async () => {
      t = await createTestApp(dialect, { env: { RATE_LIMIT_RPS: '0.01', RATE_LIMIT_BURST: '3' } });
      base = await listen(t);
    });
    after(() => t.close());

    it('answers 429 with Retry-After once the burst is spent, shared with /api/v2', async () => {
      const { token } = await t.credential(['products:read']);
      const first = await rpc(base, token, INITIALIZE);
      assert.equal(first.status, 200);
      assert.ok(first.headers.get('ratelimit-policy'), 'the RateLimit headers come with the MCP answer');
      assert.match(first.headers.get('ratelimit') ?? '', /r=2\b/);
      assert.equal((await fetch(`${base}/api/v2/products`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
      assert.equal((await rpc(base, token, INITIALIZE)).status, 200);
      const over = await rpc(base, token, INITIALIZE);
      assert.equal(over.status, 429);
      assert.ok(Number(over.headers.get('retry-after')) >= 1);
      assertProblem(over, await over.text(), 429, 'rate_limited');
      // Another credential has its own bucket.
      const other = await t.credential(['products:read']);
      assert.equal((await rpc(base, other.token, INITIALIZE)).status, 200);
    });
  });

  describe(`an MCP client with only a client id and secret finds its way to a token (${dialect})`, () => {
    let t: TestApp;
    let base: string;

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await createTestApp(dialect, { seed: { products: 3, seed: 1 }, env: { PUBLIC_URL: base } });
      await t.app.listen({ port, host: '127.0.0.1' });
    });
    after(() => t.close());

    it('the SDK\'s ClientCredentialsProvider: 401 → protected-resource metadata → authorization-server metadata → /oauth/token → tools', async () => {
      const c = await t.credential(['products:read', 'orders:read']);
      const client = new Client({ name: 'agent', version: '1.0.0' });
      const authProvider = new ClientCredentialsProvider({ clientId: c.clientId, clientSecret: c.clientSecret, expectedIssuer: base });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider }));
      assert.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), ['create_snapshot', 'get_order', 'get_product', 'get_snapshot', 'list_orders', 'list_products', 'search_products']);
      assert.equal(authProvider.tokens()?.token_type, 'Bearer');
      await client.close();
    });
  });
}
