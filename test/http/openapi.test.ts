import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { PROBLEMS } from '../../src/errors/codes.ts';
import { sortsOf } from '../../src/listing/engine.ts';
import { itemSchemaId } from '../../src/listing/schemas.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, unknown> };
  tags?: string[];
}
interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }>; securitySchemes: Record<string, { type: string; flows?: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } } }> };
}

const schemaOf = (op: Operation, status: string) => Object.values(op.responses[status]?.content ?? {})[0]?.schema;

for (const dialect of await dialects()) {
  describe(`OpenAPI document and operations routes (${dialect})`, () => {
    let t: TestApp;
    let doc: Doc;

    before(async () => {
      t = await createTestApp(dialect);
      const res = await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      doc = res.json();
    });
    after(() => t.close());

    it('is a valid OpenAPI 3.1 document', async () => {
      const validator = new Validator();
      const result = await validator.validate(doc as unknown as Record<string, unknown>);
      assert.equal(validator.version, '3.1');
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
      assert.equal(doc.openapi, '3.1.0');
    });

    it('lists every collection with its query parameters, filters, sorts and responses', () => {
      for (const def of RESOURCES) {
        const list = doc.paths[`/api/v2/${def.collection}`]?.get;
        assert.ok(list, def.collection);
        const params = new Map(list.parameters!.map((p) => [p.name, p]));
        for (const name of ['limit', 'cursor', 'sort', 'includeTotal', 'updatedSince', 'ids', ...def.filters.map((f) => f.name)]) {
          assert.equal(params.get(name)?.in, 'query', `${def.collection}: ${name}`);
        }
        assert.deepEqual(params.get('limit')!.schema.minimum, 1);
        assert.deepEqual(params.get('limit')!.schema.maximum, 1000);
        assert.deepEqual(params.get('sort')!.schema.enum, sortsOf(def));
        assert.deepEqual(list.security, [{ oauth2: [def.scope] }]);
        const ok = schemaOf(list, '200') as { properties: { data: { items: { $ref: string } }; pagination: { $ref: string } } };
        assert.equal(ok.properties.data.items.$ref, `#/components/schemas/${itemSchemaId(def)}`);
        assert.equal(ok.properties.pagination.$ref, '#/components/schemas/Pagination');
        for (const status of ['400', '401', '403', '429']) {
          assert.equal((schemaOf(list, status) as { $ref: string }).$ref, '#/components/schemas/Problem', `${def.collection} ${status}`);
          assert.deepEqual(Object.keys(list.responses[status].content!), ['application/problem+json'], 'problems are documented with their media type');
        }

        const item = doc.paths[`/api/v2/${def.collection}/{id}`]?.get;
        assert.ok(item, `${def.collection}/{id}`);
        const id = item.parameters!.find((p) => p.name === 'id')!;
        assert.equal(id.in, 'path');
        assert.equal(id.required, true);
        assert.equal(id.schema.type, 'integer');
        assert.equal((schemaOf(item, '200') as { $ref: string }).$ref, `#/components/schemas/${itemSchemaId(def)}`);
        for (const status of ['400', '401', '403', '404']) assert.equal((schemaOf(item, status) as { $ref: string }).$ref, '#/components/schemas/Problem');

        const schema = doc.components.schemas[itemSchemaId(def)];
        const fields = [...def.fields.map((f) => f.name), ...Object.keys(def.nested ?? {})];
        // Every field, always present; what `include=` embeds is documented beside them, present only when asked for.
        for (const field of fields) assert.ok(field in schema.properties, `${def.collection}.${field}`);
        assert.deepEqual([...schema.required!].sort(), [...fields].sort());
      }
    });

    it('documents the token endpoint, the admin API and the security schemes', () => {
      const token = doc.paths['/oauth/token']?.post;
      assert.ok(token);
      assert.deepEqual(Object.keys(token.requestBody!.content).sort(), ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
      const oauth2 = doc.components.securitySchemes.oauth2;
      assert.equal(oauth2.type, 'oauth2');
      assert.equal(oauth2.flows!.clientCredentials.tokenUrl, 'http://store.test/oauth/token');
      assert.deepEqual(Object.keys(oauth2.flows!.clientCredentials.scopes).sort(), [...ALL_SCOPES].sort());
      for (const w of RESOURCES) {
        const c = w.collection;
        for (const [path, method] of [[`/admin/api/${c}`, 'post'], [`/admin/api/${c}/{id}`, 'patch'], [`/admin/api/${c}/{id}`, 'delete']] as const) {
          const op = doc.paths[path]?.[method];
          assert.ok(op, `${method} ${path}`);
          assert.deepEqual(op.security, [{ adminToken: [] }]);
          assert.deepEqual(op.tags, ['Admin']);
        }
        assert.ok(doc.paths[`/admin/api/${c}`].post.requestBody, `POST /admin/api/${c} has a body schema`);
      }
      for (const path of ['/admin/api/credentials', '/admin/api/credentials/{id}', '/admin/api/credentials/{id}/rotate']) assert.ok(doc.paths[path], path);
      // Every operation under /api/v2 and /admin/api says how it is authenticated.
      for (const [path, ops] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/v2/') && !path.startsWith('/admin/api/')) continue;
        for (const [method, op] of Object.entries(ops)) assert.ok(op.security?.length, `${method} ${path} has no security`);
      }
    });

    it('serves the browsable reference at /docs', async () => {
      let res = await t.app.inject({ method: 'GET', url: '/docs' });
      if (res.statusCode >= 300 && res.statusCode < 400) res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<html/i);
      assert.match(res.body, /swagger/i);
    });

    it('answers /healthz and /readyz', async () => {
      const health = await t.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json(), { status: 'ready', database: dialect });
    });

    it('documents every problem code at the URL its type names', async () => {
      const list = await t.app.inject({ method: 'GET', url: '/problems' });
      assert.deepEqual(list.json().map((p: { code: string }) => p.code).sort(), Object.keys(PROBLEMS).sort());
      const page = await t.app.inject({ method: 'GET', url: '/problems/invalid-parameter' });
      assert.equal(page.statusCode, 200);
      assert.deepEqual(page.json(), { code: 'invalid_parameter', ...PROBLEMS.invalid_parameter });
      // The `type` of a real problem leads to its documentation.
      const { token } = await t.credential(['products:read']);
      const problem = problemOf(await t.get('/api/v2/products?limit=0', token), 400, 'invalid_parameter', 'limit');
      const doc = await t.app.inject({ method: 'GET', url: new URL(problem.type).pathname });
      assert.equal(doc.json().code, 'invalid_parameter');
      problemOf(await t.app.inject({ method: 'GET', url: '/problems/no-such-problem' }), 404, 'not_found');
    });
  });
}
