import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { TOKEN_RECHECK_MS } from '../../src/auth/tokens.ts';
import { createContext } from '../../src/context.ts';
import type { Store } from '../../src/db/database.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

interface Issued {
  id: number;
  name: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

for (const dialect of await dialects()) {
  describe(`admin API credentials (${dialect})`, () => {
    let t: TestApp;
    // A second node on the same database, with its own token cache.
    let node2: FastifyInstance;
    let store2: Store;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3, seed: 1 } });
      store2 = t.database.open();
      node2 = await buildApp(await createContext(t.config, store2), { logger: false });
      await node2.ready();
    });
    after(async () => {
      await node2.close();
      await store2.close();
      await t.close();
    });

    const create = async (name: string, scopes: string[]): Promise<Issued> => {
      const res = await t.admin('POST', '/admin/api/credentials', { name, scopes });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const tokenFor = (clientId: string, clientSecret: string, scope?: string) =>
      t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, ...(scope ? { scope } : {}) } });
    const token = async (c: { clientId: string; clientSecret: string }) => {
      const res = await tokenFor(c.clientId, c.clientSecret);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access_token as string;
    };
    const products = (app: FastifyInstance, bearer: string) => app.inject({ method: 'GET', url: '/api/v2/products?limit=1', headers: { authorization: `Bearer ${bearer}` } });

    it('creates a credential whose secret is shown once and stored only as a hash', async () => {
      const issued = await create('ERP', ['products:read', 'orders:read']);
      assert.match(issued.clientSecret, /^sds_[A-Za-z0-9_-]{43}$/, 'a 256-bit secret');
      assert.match(issued.clientId, /^sda_[0-9a-f]{24}$/);
      assert.deepEqual(issued.scopes, ['products:read', 'orders:read']);
      const row = await t.database.store.db.selectFrom('credentials').selectAll().where('id', '=', issued.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(issued.clientSecret), 'the row holds no plain secret');
      assert.ok(!JSON.stringify(row).includes(issued.clientSecret.slice(4, 20)), 'nor a piece of it');
      assert.notEqual(row.secret_hash, issued.clientSecret);

      const listed = (await t.admin('GET', '/admin/api/credentials')).json().data.find((c: { id: number }) => c.id === issued.id);
      assert.deepEqual(Object.keys(listed).sort(), ['clientId', 'createdAt', 'enabled', 'id', 'lastUsedAt', 'name', 'scopes', 'updatedAt']);
      assert.equal(listed.enabled, true);
      assert.equal(listed.lastUsedAt, null);
      const one = await t.admin('GET', `/admin/api/credentials/${issued.id}`);
      assert.deepEqual(one.json(), listed);
      assert.ok(!one.body.includes(issued.clientSecret));

      const bearer = await token(issued);
      assert.equal((await products(t.app, bearer)).statusCode, 200);
      const tokenRow = await t.database.store.db.selectFrom('tokens').selectAll().where('credential_id', '=', issued.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(tokenRow).includes(bearer), 'tokens are stored as hashes too');
      assert.match(String((await t.admin('GET', `/admin/api/credentials/${issued.id}`)).json().lastUsedAt), /^\d{4}-\d{2}-\d{2}T/);
    });

    it('validates input and answers 404 for unknown credentials', async () => {
      problemOf(await t.admin('POST', '/admin/api/credentials', { name: 'x', scopes: ['products:write'] }), 400, 'invalid_body', 'scopes.0');
      problemOf(await t.admin('POST', '/admin/api/credentials', { name: 'x', scopes: [] }), 400, 'invalid_body', 'scopes');
      problemOf(await t.admin('POST', '/admin/api/credentials', { name: 'x', scopes: 'products:read' }), 400, 'invalid_body', 'scopes');
      problemOf(await t.admin('POST', '/admin/api/credentials', { scopes: ['products:read'] }), 400, 'invalid_body', 'name');
      problemOf(await t.admin('POST', '/admin/api/credentials', { name: 'x', scopes: ['products:read'], clientSecret: 'mine' }), 400, 'invalid_body', 'clientSecret');
      const c = await create('validate', ['brands:read']);
      problemOf(await t.admin('PATCH', `/admin/api/credentials/${c.id}`, { enabled: 'false' }), 400, 'invalid_body', 'enabled');
      problemOf(await t.admin('PATCH', `/admin/api/credentials/${c.id}`, {}), 400, 'invalid_body');
      for (const [method, url] of [['GET', '/admin/api/credentials/99999'], ['PATCH', '/admin/api/credentials/99999'], ['DELETE', '/admin/api/credentials/99999'], ['POST', '/admin/api/credentials/99999/rotate']] as const) {
        problemOf(await t.admin(method, url, method === 'PATCH' ? { name: 'n' } : undefined), 404, 'not_found');
      }
      problemOf(await t.admin('GET', '/admin/api/credentials/abc'), 400, 'invalid_parameter', 'id');
    });

    it('renames, and re-scoping revokes the tokens issued with the old scopes', async () => {
      const c = await create('rescope', ['products:read', 'brands:read']);
      const old = await token(c);
      const renamed = await t.admin('PATCH', `/admin/api/credentials/${c.id}`, { name: 'renamed' });
      assert.equal(renamed.json().name, 'renamed');
      assert.equal((await products(t.app, old)).statusCode, 200, 'renaming keeps tokens');
      const narrowed = await t.admin('PATCH', `/admin/api/credentials/${c.id}`, { scopes: ['brands:read'] });
      assert.deepEqual(narrowed.json().scopes, ['brands:read']);
      problemOf(await products(t.app, old), 401, 'invalid_token');
      const fresh = await token(c);
      problemOf(await products(t.app, fresh), 403, 'insufficient_scope');
      assert.equal((await tokenFor(c.clientId, c.clientSecret, 'products:read')).json().error, 'invalid_scope');
    });

    it('rotate, disable and delete stop the old secret and tokens: here at once, on every node within the recheck time', async () => {
      const rotated = await create('rotated', ['products:read']);
      const disabled = await create('disabled', ['products:read']);
      const deleted = await create('deleted', ['products:read']);
      const tokens = { rotated: await token(rotated), disabled: await token(disabled), deleted: await token(deleted) };
      // Both nodes verify (and cache) each token first.
      for (const bearer of Object.values(tokens)) {
        assert.equal((await products(t.app, bearer)).statusCode, 200);
        assert.equal((await products(node2, bearer)).statusCode, 200);
      }

      const rotation = await t.admin('POST', `/admin/api/credentials/${rotated.id}/rotate`);
      assert.equal(rotation.statusCode, 200, rotation.body);
      const newSecret = rotation.json().clientSecret as string;
      assert.notEqual(newSecret, rotated.clientSecret);
      assert.equal(rotation.json().clientId, rotated.clientId);
      assert.equal((await t.admin('PATCH', `/admin/api/credentials/${disabled.id}`, { enabled: false })).json().enabled, false);
      assert.equal((await t.admin('DELETE', `/admin/api/credentials/${deleted.id}`)).statusCode, 204);
      problemOf(await t.admin('GET', `/admin/api/credentials/${deleted.id}`), 404, 'not_found');

      // The node that made the change refuses at once.
      for (const bearer of Object.values(tokens)) problemOf(await products(t.app, bearer), 401, 'invalid_token');
      // Secrets: the old one of the rotated credential, and those of the disabled and deleted ones, fail.
      const oldSecret = await tokenFor(rotated.clientId, rotated.clientSecret);
      assert.equal(oldSecret.statusCode, 401);
      assert.equal(oldSecret.json().error, 'invalid_client');
      assert.equal((await tokenFor(disabled.clientId, disabled.clientSecret)).statusCode, 401);
      assert.equal((await tokenFor(deleted.clientId, deleted.clientSecret)).statusCode, 401);
      const afterRotation = await token({ clientId: rotated.clientId, clientSecret: newSecret });
      assert.equal((await products(t.app, afterRotation)).statusCode, 200);

      // The other node trusts its cache for at most TOKEN_RECHECK_MS (API.md: within 5 s).
      assert.ok(TOKEN_RECHECK_MS <= 5000);
      await new Promise((r) => setTimeout(r, TOKEN_RECHECK_MS + 100));
      for (const bearer of Object.values(tokens)) problemOf(await products(node2, bearer), 401, 'invalid_token');
      assert.equal((await products(node2, afterRotation)).statusCode, 200);

      // Enabling again lets the client obtain new tokens; the revoked ones stay revoked.
      assert.equal((await t.admin('PATCH', `/admin/api/credentials/${disabled.id}`, { enabled: true })).json().enabled, true);
      assert.equal((await products(t.app, await token(disabled))).statusCode, 200);
      problemOf(await products(t.app, tokens.disabled), 401, 'invalid_token');
    });

    it('a credential may hold several valid tokens at once', async () => {
      const c = await create('workers', ['products:read']);
      const [a, b, d] = [await token(c), await token(c), await token(c)];
      assert.equal(new Set([a, b, d]).size, 3);
      for (const bearer of [a, b, d]) assert.equal((await products(node2, bearer)).statusCode, 200);
    });
  });
}
