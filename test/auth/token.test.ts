import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { insertToken } from '../../src/auth/credentials.repository.ts';
import { createCredential } from '../../src/auth/credentials.service.ts';
import { keyedHash } from '../../src/auth/secrets.ts';

for (const dialect of await dialects()) {
  describe(`POST /oauth/token (${dialect})`, () => {
    let t: TestApp;
    let clientId: string;
    let clientSecret: string;

    before(async () => {
      t = await createTestApp(dialect);
      ({ clientId, clientSecret } = await createCredential(t.database.store.db, t.ctx.hashKey, 'erp', ['products:read', 'orders:read']));
    });
    after(() => t.close());

    const post = (payload: string | Record<string, unknown>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/oauth/token', payload, headers });

    it('issues a bearer token from a urlencoded body, with no-store', async () => {
      const res = await post(`grant_type=client_credentials&client_id=${clientId}&client_secret=${clientSecret}`, { 'content-type': 'application/x-www-form-urlencoded' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 7200);
      assert.equal(body.scope, 'products:read orders:read');
      const list = await t.get('/api/v2/products', body.access_token);
      assert.equal(list.statusCode, 200);
    });

    it('accepts JSON, multipart and HTTP Basic', async () => {
      assert.equal((await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret })).statusCode, 200);
      const boundary = 'XyZ';
      const part = (n: string, v: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`;
      const multipart = part('grant_type', 'client_credentials') + part('client_id', clientId) + part('client_secret', clientSecret) + `--${boundary}--\r\n`;
      const m = await post(multipart, { 'content-type': `multipart/form-data; boundary=${boundary}` });
      assert.equal(m.statusCode, 200, m.body);
      const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
      const b = await post('grant_type=client_credentials', { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` });
      assert.equal(b.statusCode, 200, b.body);
    });

    it('narrows scopes and refuses scopes not granted (invalid_scope)', async () => {
      const ok = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'orders:read' });
      assert.equal(ok.json().scope, 'orders:read');
      const products = await t.get('/api/v2/products', ok.json().access_token);
      assert.equal(products.statusCode, 403);
      assert.match(String(products.headers['www-authenticate']), /insufficient_scope.*scope="products:read"/);
      const bad = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'brands:read' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error, 'invalid_scope');
      assert.match(bad.json().error_description, /brands:read/);
    });

    it('answers RFC 6749 errors', async () => {
      const wrong = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'nope' });
      assert.equal(wrong.statusCode, 401);
      assert.equal(wrong.json().error, 'invalid_client');
      assert.match(String(wrong.headers['www-authenticate']), /^Basic/);
      assert.equal((await post({ grant_type: 'password', client_id: clientId, client_secret: clientSecret })).json().error, 'unsupported_grant_type');
      assert.equal((await post({ client_id: clientId, client_secret: clientSecret })).json().error, 'invalid_request');
      const text = await post('hello', { 'content-type': 'text/plain' });
      assert.equal(text.statusCode, 400);
      assert.equal(text.json().error, 'invalid_request');
      const broken = await post('{"grant_type":', { 'content-type': 'application/json' });
      assert.equal(broken.statusCode, 400);
      assert.equal(broken.json().error, 'invalid_request');
    });

    it('refuses a well-formed token whose two hours are over, on a node that cached it while it was valid too', async () => {
      const issued = await createCredential(t.database.store.db, t.ctx.hashKey, 'expiring', ['brands:read']);
      const token = `sdt_${randomBytes(32).toString('base64url')}`;
      const expiresAt = Date.now() + 1500;
      await insertToken(t.database.store.db, {
        token_hash: keyedHash(t.ctx.hashKey, token), credential_id: issued.id, scopes: 'brands:read',
        expires_at: new Date(expiresAt).toISOString(), created_at: new Date(expiresAt - 7_200_000).toISOString(),
      });
      assert.equal((await t.get('/api/v2/brands', token)).statusCode, 200);
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
      const res = await t.get('/api/v2/brands', token);
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['www-authenticate']), /invalid_token/);
    });

    it('stops tokens of a disabled credential', async () => {
      const c = await t.credential(['brands:read']);
      assert.equal((await t.get('/api/v2/brands', c.token)).statusCode, 200);
      const list = await t.admin('GET', '/admin/api/credentials');
      const id = list.json().data.find((x: { clientId: string }) => x.clientId === c.clientId).id;
      assert.equal((await t.admin('PATCH', `/admin/api/credentials/${id}`, { enabled: false })).statusCode, 200);
      // Verifications are cached for at most TOKEN_RECHECK_MS; a fresh node (or this one after that) refuses at once.
      await new Promise((r) => setTimeout(r, 4100));
      const res = await t.get('/api/v2/brands', c.token);
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['www-authenticate']), /invalid_token/);
      const again = await post({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
      assert.equal(again.statusCode, 401);
    });
  });
}
