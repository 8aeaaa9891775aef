// The OpenAPI document as a product: linted by Spectral's `spectral:oas` rules (what an integrator's CI runs),
// and the things a generator or a first "Try it out" depends on, checked over the whole live document so that
// routes added later are held to them too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Document, Spectral, type ISpectralDiagnostic, type RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { DEFAULT_LIMIT } from '../../src/listing/engine.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

interface Parameter {
  name: string;
  in: string;
  description?: string;
  example?: unknown;
  examples?: unknown;
  schema?: Record<string, unknown>;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: Parameter[];
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface Doc {
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
}

/**
 * Spectral findings accepted on purpose, as `rule path` (path joined with dots), each with its reason. Empty:
 * the document has none. An entry that no longer occurs fails the test, so the list cannot go stale.
 */
const ACCEPTED: Record<string, string> = {};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);
const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.has(m)).map(([method, op]) => ({ path, method, op })));

/** Runs Spectral's `spectral:oas` ruleset (its recommended rules, as `extends: spectral:oas` does) on the document's text. */
async function lint(text: string): Promise<ISpectralDiagnostic[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'recommended']] });
  return spectral.run(new Document(text, Parsers.Json, 'openapi.json'));
}

for (const dialect of await dialects()) {
  describe(`the OpenAPI document as a product (${dialect})`, () => {
    let t: TestApp;
    let text: string;
    let doc: Doc;

    before(async () => {
      t = await createTestApp(dialect);
      const res = await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' });
      assert.equal(res.statusCode, 200);
      text = res.body;
      doc = JSON.parse(text) as Doc;
    });
    after(() => t.close());

    it('passes Spectral spectral:oas with no error and no warning', async () => {
      const findings = await lint(text);
      const key = (f: ISpectralDiagnostic) => `${String(f.code)} ${f.path.join('.')}`;
      // Severity 0 error, 1 warning; 2 info and 3 hint are advice, kept out of the assertion but not out of sight.
      const serious = findings.filter((f) => f.severity <= 1 && !(key(f) in ACCEPTED));
      assert.deepEqual(serious.map((f) => `${key(f)}: ${f.message}`), []);
      const stale = Object.keys(ACCEPTED).filter((k) => !findings.some((f) => key(f) === k));
      assert.deepEqual(stale, [], 'accepted findings that no longer occur: remove them from ACCEPTED');
    });

    it('names every operation with a unique camelCase operationId, the expected ones among them', () => {
      const ids = operations(doc).map(({ op, method, path }) => {
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${method} ${path}`);
        return op.operationId!;
      });
      assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
      const byRoute = new Map(operations(doc).map(({ method, path, op }) => [`${method.toUpperCase()} ${path}`, op.operationId]));
      const expected: Record<string, string> = {
        'POST /oauth/token': 'createToken',
        'GET /api/v2/products': 'listProducts',
        'GET /api/v2/products/{id}': 'getProduct',
        'GET /api/v2/product-parameters': 'listProductParameters',
        'GET /api/v2/product-parameters/{id}': 'getProductParameter',
        'GET /api/v2/categories': 'listCategories',
        'GET /api/v2/changes': 'listChanges',
        'GET /api/v2/changes/head': 'getChangesHead',
        'POST /admin/api/products': 'adminCreateProduct',
        'PATCH /admin/api/products/{id}': 'adminUpdateProduct',
        'DELETE /admin/api/products/{id}': 'adminDeleteProduct',
        'GET /admin/api/credentials': 'adminListCredentials',
        'POST /admin/api/credentials/{id}/rotate': 'adminRotateCredential',
        'GET /admin/api/webhooks/{id}/deliveries/{delivery}': 'adminGetWebhookDelivery',
        'GET /healthz': 'getHealth',
      };
      for (const [route, id] of Object.entries(expected)) assert.equal(byRoute.get(route), id, route);
      // Exports, wherever they live (`/api/v2/{collection}/export`, or the listing itself), are named for what they do.
      if (doc.paths['/api/v2/products/export']) assert.equal(byRoute.get('GET /api/v2/products/export'), 'exportProducts');
    });

    it('defines every tag used, with a description, the public API first and the admin API and operations last', () => {
      const defined = doc.tags.map((tag) => tag.name);
      assert.equal(new Set(defined).size, defined.length, 'each tag defined once');
      for (const tag of doc.tags) assert.ok(tag.description?.trim(), `tag ${tag.name} has a description (add it to TAGS in src/http/openapi.ts)`);
      for (const { method, path, op } of operations(doc)) {
        assert.ok(op.tags?.length, `${method} ${path} has a tag`);
        for (const tag of op.tags!) assert.ok(defined.includes(tag), `${method} ${path}: tag ${tag} is defined`);
      }
      assert.equal(defined[0], 'OAuth');
      assert.deepEqual(defined.slice(-2), ['Admin', 'Operations']);
      // Each collection's tag, in the registry's order, right after OAuth and described by its declaration.
      const collectionTags = t.ctx.resources.list.map((def) => doc.paths[`/api/v2/${def.collection}`].get.tags![0]);
      assert.deepEqual(defined.slice(1, 1 + collectionTags.length), collectionTags);
      for (const def of t.ctx.resources.list) {
        assert.equal(doc.tags.find((tag) => tag.name === doc.paths[`/api/v2/${def.collection}`].get.tags![0])?.description, def.description);
      }
      // Paths follow the tags: no admin or operations path before a public one.
      const rank = (path: string) => Math.min(...Object.values(doc.paths[path]).flatMap((op) => op.tags ?? []).map((name) => defined.indexOf(name)));
      const ranks = Object.keys(doc.paths).map(rank);
      assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), 'paths are in tag order');
    });

    it(`documents limit's default (${DEFAULT_LIMIT}) on every listing, which the runtime schema does not apply`, async () => {
      for (const def of t.ctx.resources.list) {
        const limit = doc.paths[`/api/v2/${def.collection}`].get.parameters!.find((p) => p.name === 'limit')!;
        assert.equal(limit.schema!.default, DEFAULT_LIMIT, def.collection);
      }
      // Only documented: an export without `limit` still carries every row (here the 3 seeded brands, one page of none).
      const { token } = await t.credential(['brands:read']);
      for (const name of ['A', 'B', 'C']) assert.equal((await t.admin('POST', '/admin/api/brands', { name })).statusCode, 201);
      const exportPath = doc.paths['/api/v2/brands/export'] ? '/api/v2/brands/export' : '/api/v2/brands';
      const csv = await t.get(`${exportPath}?format=csv`, token);
      assert.equal(csv.statusCode, 200, csv.body);
      assert.equal(csv.body.trim().split('\n').length, 1 + 3);
    });

    it('documents HEAD on every download of the public API, without a body', () => {
      const downloads = operations(doc).filter(
        ({ path, method, op }) => path.startsWith('/api/v2/') && method === 'get' && Object.keys(op.responses['200']?.content ?? {}).some((type) => !/json$/.test(type)),
      );
      assert.ok(downloads.some(({ path }) => path.includes('products')), 'the products export is a download');
      for (const { path, op } of downloads) {
        const head = doc.paths[path].head;
        assert.ok(head, `HEAD ${path}`);
        assert.equal(head.operationId, `${op.operationId}Head`);
        assert.deepEqual(head.parameters?.map((p) => p.name), op.parameters?.map((p) => p.name), `HEAD ${path} takes the GET's parameters`);
        for (const [status, response] of Object.entries(head.responses)) assert.equal(response.content, undefined, `HEAD ${path} ${status} has no body`);
      }
    });

    it('pre-fills no query parameter of "Try it out": no examples, no defaults but limit', () => {
      for (const { method, path, op } of operations(doc)) {
        for (const p of op.parameters ?? []) {
          if (p.in !== 'query') continue;
          const where = `${method} ${path} ${p.name}`;
          assert.equal(p.example, undefined, where);
          assert.equal(p.examples, undefined, where);
          assert.equal(p.schema?.example, undefined, where);
          assert.equal(p.schema?.examples, undefined, where);
          if (p.name !== 'limit') assert.equal(p.schema?.default, undefined, where);
        }
      }
      // The example is still there to read.
      const status = doc.paths['/api/v2/products'].get.parameters!.find((p) => p.name === 'status')!;
      assert.match(status.description!, /Example: `active,draft`/);
    });

    it('serves /docs titled and marked as this service', async () => {
      let res = await t.app.inject({ method: 'GET', url: '/docs' });
      if (res.statusCode >= 300 && res.statusCode < 400) res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
      assert.match(res.body, /<title>Store Data API<\/title>/);
      const icon = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(res.body);
      assert.ok(icon, 'an SVG favicon');
      const favicon = await t.app.inject({ method: 'GET', url: new URL(icon[1], 'http://store.test/docs/').pathname });
      assert.equal(favicon.statusCode, 200);
      assert.match(String(favicon.headers['content-type']), /^image\/svg\+xml/);
      assert.match(favicon.body, /aria-label="Store Data API"/);
      const init = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      assert.match(init.body, /data:image\/svg\+xml;base64,/, 'the top bar shows the same mark');
    });
  });
}
