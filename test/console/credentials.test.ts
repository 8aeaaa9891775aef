// The console's credentials pages over HTTP: the admin API's rules hold (tokens of a disabled or re-scoped
// credential stop at once, a rotated secret replaces the old one), and nothing is rendered unescaped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { signIn, type Browserish } from './console-client.ts';

const secretOf = (body: string): string => {
  const m = /id="client-secret" class="mono" readonly value="(sds_[A-Za-z0-9_-]{43})"/.exec(body);
  assert.ok(m, 'the page shows the secret');
  return m[1];
};
const clientIdOf = (body: string): string => /id="client-id" class="mono" readonly value="(sda_[0-9a-f]+)"/.exec(body)![1];

for (const dialect of await dialects()) {
  describe(`console credentials (${dialect})`, () => {
    let t: TestApp;
    let admin: Browserish;

    const token = async (clientId: string, clientSecret: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
      return { status: res.statusCode, token: res.statusCode === 200 ? (res.json().access_token as string) : '' };
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3, orders: 2, seed: 1 } });
      admin = await signIn(t.app);
    });
    after(() => t.close());

    it('creates a credential from checkboxes, shows its secret once with a curl line, and the scopes decide what it reads', async () => {
      const form = await admin.get('/admin/credentials/new');
      assert.equal(form.statusCode, 200);
      assert.match(form.body, /<input type="checkbox" name="scopes" value="products:read" id="scope-products-read">\s*<label for="scope-products-read"><code>products:read<\/code> <span>Read products<\/span><\/label>/);

      const created = await admin.post('/admin/credentials', { name: 'ERP', scopes: ['products:read', 'orders:read'] });
      assert.equal(created.statusCode, 201);
      assert.match(created.body, /Copy the secret now/);
      assert.match(created.body, /data-copy="client-secret"/);
      const clientId = clientIdOf(created.body);
      const secret = secretOf(created.body);
      assert.match(created.body, new RegExp(`curl -s -X POST http://store.test/oauth/token -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${secret}`));
      assert.match(created.body, /curl -s &quot;http:\/\/store.test\/api\/v2\/products\?limit=2&quot;/);

      const { token: bearer } = await token(clientId, secret);
      assert.equal((await t.get('/api/v2/products', bearer)).statusCode, 200);
      assert.equal((await t.get('/api/v2/orders', bearer)).statusCode, 200);
      assert.equal((await t.get('/api/v2/categories', bearer)).statusCode, 403);

      const list = await admin.get('/admin/credentials');
      assert.match(list.body, /<a href="\/admin\/credentials\/\d+">ERP<\/a>/);
      assert.match(list.body, /data-label="Live tokens" class="num">1</);
      assert.doesNotMatch(list.body, new RegExp(secret), 'the list never shows a secret');
    });

    it('unticking a scope ends the tokens issued with it; a new token is refused that scope (403)', async () => {
      const created = await admin.post('/admin/credentials', { name: 'Feed', scopes: ['products:read', 'orders:read'] });
      const clientId = clientIdOf(created.body);
      const secret = secretOf(created.body);
      const old = (await token(clientId, secret)).token;
      const id = /href="\/admin\/credentials\/(\d+)"/.exec(created.body)![1];

      const renamed = await admin.post(`/admin/credentials/${id}`, { name: 'Feed (renamed)', scopes: ['orders:read', 'products:read'] });
      assert.equal(renamed.statusCode, 303);
      assert.equal(renamed.headers.location, `/admin/credentials/${id}?notice=renamed`);
      assert.equal((await t.get('/api/v2/orders', old)).statusCode, 200, 'a rename with the same scopes keeps the tokens');

      const saved = await admin.post(`/admin/credentials/${id}`, { name: 'Feed', scopes: ['products:read'] });
      assert.equal(saved.statusCode, 303);
      assert.equal((await t.get('/api/v2/products', old)).statusCode, 401, 'the old token stopped at once');
      const fresh = (await token(clientId, secret)).token;
      assert.equal((await t.get('/api/v2/products', fresh)).statusCode, 200);
      assert.equal((await t.get('/api/v2/orders', fresh)).statusCode, 403);
      const page = await admin.get(`/admin/credentials/${id}?notice=saved`);
      assert.match(page.body, /<input type="checkbox" name="scopes" value="orders:read" id="scope-orders-read">/, 'orders:read is unticked');
      assert.match(page.body, /Changes saved/);

      const none = await admin.post(`/admin/credentials/${id}`, { name: 'Feed' });
      assert.equal(none.statusCode, 400);
      assert.match(none.body, /needs at least one scope|must name at least one scope/);
      assert.equal((await t.get('/api/v2/products', fresh)).statusCode, 200, 'a refused form changes nothing');
    });

    it('disabling stops its tokens at once and refuses new ones; enabling lets it obtain tokens again', async () => {
      const created = await admin.post('/admin/credentials', { name: 'Temp', scopes: ['brands:read'] });
      const clientId = clientIdOf(created.body);
      const secret = secretOf(created.body);
      const id = /href="\/admin\/credentials\/(\d+)"/.exec(created.body)![1];
      const bearer = (await token(clientId, secret)).token;
      assert.equal((await t.get('/api/v2/brands', bearer)).statusCode, 200);

      const disabled = await admin.post(`/admin/credentials/${id}/disable`, {});
      assert.equal(disabled.statusCode, 303);
      assert.equal((await t.get('/api/v2/brands', bearer)).statusCode, 401);
      assert.equal((await token(clientId, secret)).status, 401);
      assert.match((await admin.get(`/admin/credentials/${id}`)).body, /<span class="badge off">Disabled<\/span>/);

      assert.equal((await admin.post(`/admin/credentials/${id}/enable`, {})).statusCode, 303);
      const again = await token(clientId, secret);
      assert.equal(again.status, 200);
      assert.equal((await t.get('/api/v2/brands', again.token)).statusCode, 200);
    });

    it('rotating and deleting ask first (a page of their own without the script), then act', async () => {
      const created = await admin.post('/admin/credentials', { name: 'Rotating', scopes: ['brands:read'] });
      const clientId = clientIdOf(created.body);
      const secret = secretOf(created.body);
      const id = /href="\/admin\/credentials\/(\d+)"/.exec(created.body)![1];
      const detail = await admin.get(`/admin/credentials/${id}`);
      assert.match(detail.body, /<form method="post" action="\/admin\/credentials\/\d+\/delete" data-confirm="Delete the credential “Rotating”\?/);

      const ask = await admin.post(`/admin/credentials/${id}/rotate`, {});
      assert.equal(ask.statusCode, 200);
      assert.match(ask.body, /name="confirmed" value="yes"/);
      assert.equal((await token(clientId, secret)).status, 200, 'not rotated before confirmation');

      const rotated = await admin.post(`/admin/credentials/${id}/rotate`, { confirmed: 'yes' });
      assert.equal(rotated.statusCode, 200);
      const next = secretOf(rotated.body);
      assert.notEqual(next, secret);
      assert.equal((await token(clientId, secret)).status, 401);
      assert.equal((await token(clientId, next)).status, 200);

      const askDelete = await admin.post(`/admin/credentials/${id}/delete`, {});
      assert.equal(askDelete.statusCode, 200);
      assert.equal((await admin.get(`/admin/credentials/${id}`)).statusCode, 200, 'not deleted before confirmation');
      const deleted = await admin.post(`/admin/credentials/${id}/delete`, { confirmed: 'yes' });
      assert.equal(deleted.statusCode, 303);
      assert.equal(deleted.headers.location, '/admin/credentials?notice=deleted');
      assert.equal((await admin.get(`/admin/credentials/${id}`)).statusCode, 404);
      assert.equal((await token(clientId, next)).status, 401);
    });

    it('escapes what it shows, and refuses bad forms with the reasons beside them', async () => {
      const evil = '<script>alert(1)</script>"onmouseover="x';
      const created = await admin.post('/admin/credentials', { name: evil, scopes: ['brands:read'] });
      assert.equal(created.statusCode, 201);
      const list = await admin.get('/admin/credentials');
      assert.ok(!list.body.includes('<script>alert(1)'));
      assert.ok(list.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&quot;x'));

      const unknown = await admin.post('/admin/credentials', { name: 'X', scopes: ['products:write'] });
      assert.equal(unknown.statusCode, 400);
      assert.match(unknown.body, /role="alert"/);
      assert.match(unknown.body, /Unknown scope|unknown scope/);
      const empty = await admin.post('/admin/credentials', { name: '  ', scopes: ['brands:read'] });
      assert.equal(empty.statusCode, 400);
      assert.match(empty.body, /<strong>name<\/strong> must not be empty/);
      const tooLong = await admin.post('/admin/credentials', { name: 'x'.repeat(201), scopes: ['brands:read'] });
      assert.equal(tooLong.statusCode, 400);
      assert.match(String(tooLong.headers['content-type']), /^text\/html/);
      assert.equal((await admin.get('/admin/credentials/999999')).statusCode, 404);
    });
  });
}
