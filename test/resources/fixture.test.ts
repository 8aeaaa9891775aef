import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { importFile } from '../../src/import/import.ts';
import { appRegistry } from '../../src/modules/registry.ts';
import { startSnapshotRunner } from '../../src/snapshots/starter.ts';
import { runSync } from '../../src/sync/follower.ts';
import { mirrorsOf } from '../../src/sync/mirrors.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';
import { readCsv, readXlsx } from '../listing/formats/readers.ts';
import { widgetMigrations } from './fixture/widgets/migration.ts';
import { widgets } from './fixture/widgets/resource.ts';

type Item = Record<string, unknown> & { id: number };

/*
 * A resource declared only in a test folder (fixture/widgets: its declaration and its migration), added to the
 * store's registry here, gets with no other edit what every resource gets: listing with filters and cursor,
 * CSV and XLSX, the single item, its read scope, admin writes with events, the changes feed, import by its
 * natural key, and a follower store that mirrors it.
 */
for (const dialect of await dialects()) {
  describe(`a resource declared only in a test folder (${dialect})`, () => {
    const registry = appRegistry([widgets]);
    let t: TestApp;
    let reader: string;
    let categoryIds: number[];
    const ids: Record<string, number> = {};

    before(async () => {
      t = await createTestApp(dialect, { resources: registry, migrations: widgetMigrations, seed: { products: 3, orders: 1, seed: 5 } });
      reader = (await t.credential(['widgets:read', 'changes:read'])).token;
      categoryIds = (await t.database.store.db.selectFrom('categories').select('id').orderBy('id').limit(2).execute()).map((r) => Number(r.id));
    });
    after(() => t?.close());

    const list = async (query: string, token = reader) => {
      const res = await t.get(`/api/v2/widgets${query}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { data: Item[]; pagination: { nextCursor: string | null; hasMore: boolean } };
    };

    it('admin create, update and delete, each recording its widget event; references, uniques and dependents checked', async () => {
      const created: Item[] = [];
      for (const [sku, name, price, categoryId] of [['W-1', 'Blue widget', '12.5', categoryIds[0]], ['W-2', 'Red widget', '7', categoryIds[1]], ['W-3', 'Spare widget', '1.99', null]] as const) {
        const res = await t.admin('POST', '/admin/api/widgets', { sku, name, price, categoryId });
        assert.equal(res.statusCode, 201, res.body);
        created.push(res.json() as Item);
        ids[sku] = (res.json() as Item).id;
      }
      assert.deepEqual(Object.keys(created[0]), ['id', 'sku', 'name', 'price', 'categoryId', 'createdAt', 'updatedAt']);
      assert.equal(created[0].price, '12.50', 'money is normalised');

      const patched = await t.admin('PATCH', `/admin/api/widgets/${ids['W-1']}`, { name: 'Blue widget XL' });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().name, 'Blue widget XL');

      problemOf(await t.admin('POST', '/admin/api/widgets', { sku: 'W-1', name: 'Again', price: '1.00' }), 409, 'conflict', 'sku');
      problemOf(await t.admin('POST', '/admin/api/widgets', { sku: 'W-8', name: 'Lost', price: '1.00', categoryId: 987654 }), 409, 'conflict', 'categoryId');
      problemOf(await t.admin('POST', '/admin/api/widgets', { sku: 'W-8', name: 'Bad', price: 'cheap' }), 400, 'invalid_body', 'price');
      // The category a widget points at cannot go: the relation is declared once, on the widget.
      const blocked = problemOf(await t.admin('DELETE', `/admin/api/categories/${categoryIds[1]}`), 409, 'conflict', 'id');
      assert.match(blocked.detail, /widgets/);

      assert.equal((await t.admin('DELETE', `/admin/api/widgets/${ids['W-3']}`)).statusCode, 204);
      assert.equal((await t.admin('DELETE', `/admin/api/widgets/${ids['W-3']}`)).statusCode, 404);

      const events = await t.database.store.db.selectFrom('events').select(['type', 'resource', 'resource_id', 'data']).where('resource', '=', 'widget').orderBy('seq').execute();
      assert.deepEqual(events.map((e) => [e.type, Number(e.resource_id)]), [
        ['widget.created', ids['W-1']], ['widget.created', ids['W-2']], ['widget.created', ids['W-3']], ['widget.updated', ids['W-1']], ['widget.deleted', ids['W-3']],
      ]);
      assert.deepEqual(JSON.parse(events[3].data), patched.json(), 'an event carries the item as the API shows it');
    });

    it('lists with its filters and a signed cursor, and serves the single item', async () => {
      const first = await list('?limit=1');
      assert.deepEqual(first.data.map((w) => w.sku), ['W-1']);
      assert.ok(first.pagination.hasMore && first.pagination.nextCursor);
      const second = await list(`?cursor=${first.pagination.nextCursor}`);
      assert.deepEqual(second.data.map((w) => w.sku), ['W-2']);
      assert.equal(second.pagination.nextCursor, null);
      assert.deepEqual((await list('?sku=W-2')).data.map((w) => w.id), [ids['W-2']]);
      assert.deepEqual((await list(`?categoryId=${categoryIds[0]}`)).data.map((w) => w.id), [ids['W-1']]);
      assert.deepEqual((await list('?q=blue')).data.map((w) => w.id), [ids['W-1']]);
      assert.deepEqual((await list('?sort=-updatedAt')).data.map((w) => w.sku), ['W-1', 'W-2']);
      problemOf(await t.get('/api/v2/widgets?colour=red', reader), 400, 'invalid_parameter', 'colour');

      const one = await t.get(`/api/v2/widgets/${ids['W-2']}`, reader);
      assert.equal(one.statusCode, 200);
      assert.deepEqual(one.json(), second.data[0]);
      problemOf(await t.get('/api/v2/widgets/987654', reader), 404, 'not_found');
    });

    it('exports CSV and XLSX with columns derived from the declaration', async () => {
      const csv = await t.get('/api/v2/widgets?format=csv', reader);
      assert.equal(csv.statusCode, 200);
      const [header, ...rows] = readCsv(csv.rawPayload);
      assert.deepEqual(header, ['id', 'sku', 'name', 'price', 'categoryId', 'createdAt', 'updatedAt']);
      assert.deepEqual(rows.map((r) => [r[1], r[3]]), [['W-1', '12.50'], ['W-2', '7.00']]);

      const xlsx = await t.get('/api/v2/widgets?format=xlsx', reader);
      assert.equal(xlsx.statusCode, 200);
      const sheet = readXlsx(xlsx.rawPayload);
      assert.deepEqual(sheet.rows[0], header);
      assert.deepEqual(sheet.rows.slice(1).map((r) => [r[1], r[3]]), [['W-1', 12.5], ['W-2', 7]], 'money is a number in XLSX');
    });

    it('needs its own read scope, which a credential can be given through the admin API', async () => {
      const other = (await t.credential(['products:read', 'changes:read'])).token;
      problemOf(await t.get('/api/v2/widgets', other), 403, 'insufficient_scope');
      problemOf(await t.get(`/api/v2/widgets/${ids['W-1']}`, other), 403, 'insufficient_scope');

      const issued = await t.admin('POST', '/admin/api/credentials', { name: 'widget reader', scopes: ['widgets:read'] });
      assert.equal(issued.statusCode, 201, issued.body);
      const { clientId, clientSecret } = issued.json() as { clientId: string; clientSecret: string };
      const token = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'widgets:read' } });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal((await list('', token.json().access_token as string)).data.length, 2);

      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as { paths: Record<string, unknown>; components: { securitySchemes: { oauth2: { flows: { clientCredentials: { scopes: Record<string, string> } } } } } };
      assert.equal(doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes['widgets:read'], 'Read widgets');
      for (const path of ['/api/v2/widgets', '/api/v2/widgets/{id}', '/admin/api/widgets', '/admin/api/widgets/{id}']) assert.ok(doc.paths[path], path);
    });

    it('shows its events in the changes feed, only to a token that may read widgets', async () => {
      const feed = async (token: string) => ((await t.get('/api/v2/changes?limit=1000', token)).json() as { data: Array<{ type: string; resource: string }> }).data;
      assert.deepEqual((await feed(reader)).map((e) => e.type), ['widget.created', 'widget.created', 'widget.created', 'widget.updated', 'widget.deleted']);
      const productsOnly = (await t.credential(['products:read', 'changes:read'])).token;
      const seen = await feed(productsOnly);
      assert.ok(seen.length > 0 && seen.every((e) => e.resource === 'product'), 'no widget event without widgets:read');
    });

    it('imports by its natural key: a record with a known sku updates that widget instead of adding one', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'widgets-import-'));
      try {
        const path = join(dir, 'widgets.jsonl');
        writeFileSync(path, `${JSON.stringify({ sku: 'W-2', name: 'Red widget, renamed', price: '7.00' })}\n${JSON.stringify({ sku: 'W-4', name: 'New widget', price: '3.30' })}\n`);
        const result = await importFile(t.database.store, path, { resources: registry, bus: t.ctx.bus });
        assert.deepEqual(result, { resource: 'widgets', format: 'jsonl', records: 2, created: 1, updated: 1, unchanged: 0, events: 2 });
        const all = (await list('')).data;
        assert.deepEqual(all.map((w) => [w.sku, w.name]), [['W-1', 'Blue widget XL'], ['W-2', 'Red widget, renamed'], ['W-4', 'New widget']]);
        ids['W-4'] = all[2].id;

        // An export imports back unchanged: the CSV columns are the declaration's.
        const csvPath = join(dir, 'widgets.csv');
        writeFileSync(csvPath, (await t.get('/api/v2/widgets?format=csv', reader)).rawPayload);
        assert.equal((await importFile(t.database.store, csvPath, { resources: registry })).unchanged, 3);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('is mirrored by a follower store, changes included', async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const address = t.app.server.address();
      const from = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const follower = await createTestApp(dialect, { resources: registry, migrations: widgetMigrations });
      // The follower's first copy asks the main store for snapshots, which the main store's runner makes (a
      // served store runs it in the background; this test app starts no background work of its own).
      const runner = await startSnapshotRunner(t.ctx);
      try {
        const { clientId, clientSecret } = await t.credential(mirrorsOf(registry).requiredScopes as Scope[]);
        const quiet = { info: () => {}, warn: () => {}, error: () => {} };
        const sync = () => runSync({ store: follower.database.store, from, clientId, clientSecret, follow: false, log: quiet, resources: registry, bus: follower.ctx.bus });
        const followerToken = (await follower.credential(['widgets:read', 'categories:read'])).token;
        const same = async () => {
          const mine = (await list('?limit=1000')).data;
          const theirs = ((await follower.get('/api/v2/widgets?limit=1000', followerToken)).json() as { data: Item[] }).data;
          assert.deepEqual(theirs, mine);
          return theirs;
        };

        const first = await sync();
        assert.ok(first.snapshot, 'a first sync takes a snapshot');
        assert.equal((await same()).length, 3);

        assert.equal((await t.admin('PATCH', `/admin/api/widgets/${ids['W-1']}`, { price: '13.00', categoryId: categoryIds[1] })).statusCode, 200);
        assert.equal((await t.admin('DELETE', `/admin/api/widgets/${ids['W-4']}`)).statusCode, 204);
        const next = await sync();
        assert.equal(next.snapshot, null, 'then it follows the feed');
        assert.deepEqual((await same()).map((w) => [w.sku, w.price, w.categoryId]), [['W-1', '13.00', categoryIds[1]], ['W-2', '7.00', categoryIds[1]]]);
        // The derived search column came with it: the follower's own filter finds the widget.
        const found = (await follower.get('/api/v2/widgets?q=renamed', followerToken)).json() as { data: Item[] };
        assert.deepEqual(found.data.map((w) => w.sku), ['W-2']);
        const own = await follower.database.store.db.selectFrom('events').select('type').where('resource', '=', 'widget').execute();
        assert.ok(own.some((e) => e.type === 'widget.deleted'), 'the follower records its own widget events');
      } finally {
        await runner?.stop();
        await follower.close();
      }
    });
  });
}
