// Where the console is found (the root links it) and where it is not (the public OpenAPI document).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

for (const dialect of await dialects()) {
  describe(`the console's links (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    it('GET / links the console: JSON for clients, a page for browsers', async () => {
      const json = await t.app.inject({ method: 'GET', url: '/' });
      assert.equal(json.statusCode, 200);
      assert.equal(json.json().links.console, 'http://store.test/admin');
      assert.equal(json.headers.vary, 'Accept');
      const page = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.body, /<a href="\/admin">Store console<\/a>/);
      const css = await t.app.inject({ method: 'GET', url: '/admin/static/console.css' });
      assert.equal(css.statusCode, 200, 'the stylesheet is served without a session');
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/static/../plugin.ts' })).statusCode, 404);
    });

    it('console routes stay out of the public OpenAPI document', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as { paths: Record<string, unknown> };
      const consolePaths = Object.keys(doc.paths).filter((p) => p.startsWith('/admin') && !p.startsWith('/admin/api/'));
      assert.deepEqual(consolePaths, []);
      assert.ok(Object.keys(doc.paths).some((p) => p.startsWith('/admin/api/')), 'the admin API is documented');
    });
  });
}
