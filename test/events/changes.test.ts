import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { inTransaction } from '../../src/events/transaction.ts';
import { recordEvents } from '../../src/events/log.ts';
import { newestEventBefore } from '../../src/events/feed.ts';
import { pruneOnce } from '../../src/events/pruner.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

interface Change { seq: number; type: string; resource: string; resourceId: number; occurredAt: string; data: Record<string, unknown> }

const product = (n: number) => ({ articleNumber: `CF-${n}`, name: `Feed product ${n}`, price: '10.00', currency: 'CZK', vatRate: 21 });

for (const dialect of await dialects()) {
  describe(`GET /api/v2/changes (${dialect})`, () => {
    let t: TestApp;
    let all: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 6, orders: 3, seed: 7 } });
      all = (await t.credential(['changes:read', 'products:read', 'categories:read', 'brands:read', 'product-parameters:read', 'product-filters:read', 'orders:read'])).token;
    });
    after(() => t.close());

    /** Every event visible to `token` after `from`, page by page through nextCursor. */
    async function follow(token: string, from = 0, limit = 7): Promise<Change[]> {
      const out: Change[] = [];
      let cursor = from;
      for (let pages = 0; pages < 1000; pages++) {
        const res = await t.get(`/api/v2/changes?after=${cursor}&limit=${limit}`, token);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { data: Change[]; pagination: { limit: number; nextCursor: string; hasMore: boolean } };
        out.push(...body.data);
        assert.equal(body.pagination.limit, limit);
        if (body.data.length) assert.equal(body.pagination.nextCursor, String(body.data[body.data.length - 1].seq));
        if (body.pagination.hasMore) assert.match(String(res.headers.link), new RegExp(`after=${body.pagination.nextCursor}.*rel="next"`));
        else assert.equal(res.headers.link, undefined);
        cursor = Number(body.pagination.nextCursor);
        if (!body.pagination.hasMore) return out;
      }
      throw new Error('feed did not end');
    }

    it('returns every event once, in strictly growing seq order, with the documented fields', async () => {
      const events = await follow(all);
      const stored = await t.database.store.db.selectFrom('events').select(['seq', 'type', 'data']).orderBy('seq').execute();
      assert.ok(stored.length > 20);
      assert.deepEqual(events.map((e) => e.seq), stored.map((e) => Number(e.seq)));
      for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq);
      const first = events[0];
      assert.deepEqual(Object.keys(first).sort(), ['data', 'occurredAt', 'resource', 'resourceId', 'seq', 'type']);
      assert.deepEqual(first.data, JSON.parse(stored[0].data));
      assert.match(first.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('records writes of the admin API, product.updated for parameter values and order.status_changed beside order.updated', async () => {
      const head = (await t.get('/api/v2/changes/head', all)).json().seq as number;
      const created = (await t.admin('POST', '/admin/api/products', product(1))).json();
      await t.admin('PATCH', `/admin/api/products/${created.id}`, { stock: 5 });
      assert.equal((await t.admin('POST', '/admin/api/product-parameters', { productId: created.id, parameterName: 'Colour depth', value: '24' })).statusCode, 201);
      const order = (await t.get('/api/v2/orders?limit=1', all)).json().data[0];
      const next = order.status === 'cancelled' ? 'returned' : 'cancelled';
      assert.equal((await t.admin('PATCH', `/admin/api/orders/${order.id}`, { status: next })).statusCode, 200);
      await t.admin('DELETE', `/admin/api/products/${created.id}`);

      const events = await follow(all, head, 1000);
      const types = events.map((e) => `${e.type}:${e.resourceId}`);
      assert.deepEqual(types.slice(0, 2), [`product.created:${created.id}`, `product.updated:${created.id}`]);
      assert.equal(events[1].data.stock, 5);
      assert.ok(types.includes(`product.updated:${created.id}`, 2), 'a parameter value change also records product.updated');
      assert.ok(types.some((x) => x.startsWith('product-parameter.created:')));
      const statusChanged = events.find((e) => e.type === 'order.status_changed')!;
      assert.equal(statusChanged.resourceId, order.id);
      assert.equal(statusChanged.data.previousStatus, order.status);
      assert.equal(statusChanged.data.status, next);
      assert.ok(events.some((e) => e.type === 'order.updated' && e.resourceId === order.id));
      const deleted = events[events.length - 1];
      assert.equal(deleted.type, 'product.deleted');
      assert.deepEqual(deleted.data, { id: created.id });
    });

    it('shows a credential only the events of resources it may read', async () => {
      const everything = await follow(all);
      const brandsOnly = (await t.credential(['changes:read', 'brands:read'])).token;
      const seen = await follow(brandsOnly, 0, 3);
      assert.ok(seen.length > 0);
      assert.ok(seen.every((e) => e.resource === 'brand'));
      assert.deepEqual(seen.map((e) => e.seq), everything.filter((e) => e.resource === 'brand').map((e) => e.seq));

      const ordersAndProducts = (await t.credential(['changes:read', 'orders:read', 'products:read'])).token;
      const seen2 = await follow(ordersAndProducts, 0, 1000);
      assert.deepEqual(seen2.map((e) => e.seq), everything.filter((e) => e.resource === 'order' || e.resource === 'product').map((e) => e.seq));

      const feedOnly = (await t.credential(['changes:read'])).token;
      const none = await t.get('/api/v2/changes', feedOnly);
      assert.equal(none.statusCode, 200);
      assert.deepEqual(none.json(), { data: [], pagination: { limit: 50, nextCursor: '0', hasMore: false } });
    });

    it('needs the changes:read scope and a token', async () => {
      const noFeed = (await t.credential(['products:read'])).token;
      for (const url of ['/api/v2/changes', '/api/v2/changes/head']) {
        const res = await t.get(url, noFeed);
        assert.equal(res.statusCode, 403);
        assert.match(String(res.headers['www-authenticate']), /scope="changes:read"/);
        assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 401);
      }
    });

    it('refuses malformed parameters with 400 naming them', async () => {
      for (const [query, name] of [['limit=0', 'limit'], ['limit=1001', 'limit'], ['after=-1', 'after'], ['after=x', 'after'], ['wait=31', 'wait'], ['colour=red', 'colour'], ['after=3&cursor=4', 'cursor']]) {
        const res = await t.get(`/api/v2/changes?${query}`, all);
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().code, 'invalid_parameter');
        assert.ok(res.json().errors.some((e: { name: string }) => e.name === name), `${query}: ${res.body}`);
      }
      const viaCursor = await t.get('/api/v2/changes?cursor=2&limit=1', all);
      assert.equal(viaCursor.json().data[0].seq, 3);
    });

    it('answers the head, which follows new writes', async () => {
      const head = await t.get('/api/v2/changes/head', all);
      assert.equal(head.statusCode, 200);
      const events = await follow(all, 0, 1000);
      assert.deepEqual(head.json(), { seq: events[events.length - 1].seq });
      await t.admin('POST', '/admin/api/brands', { name: 'Head brand' });
      const after = (await t.get('/api/v2/changes/head', all)).json().seq;
      assert.ok(after > head.json().seq);
      const tail = (await t.get(`/api/v2/changes?after=${head.json().seq}`, all)).json();
      assert.equal(tail.data.length, 1);
      assert.equal(tail.data[0].seq, after);
      const beyond = (await t.get(`/api/v2/changes?after=${after + 100}`, all)).json();
      assert.deepEqual(beyond.data, []);
      assert.equal(beyond.pagination.nextCursor, String(after + 100));
    });

    it('long-polls: an empty wait answers when a write commits, not when the wait ends', async () => {
      const head = (await t.get('/api/v2/changes/head', all)).json().seq as number;
      const started = Date.now();
      const pending = t.get(`/api/v2/changes?after=${head}&wait=20`, all);
      setTimeout(() => void t.admin('POST', '/admin/api/brands', { name: 'Long-poll brand' }), 300);
      const res = await pending;
      const took = Date.now() - started;
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data[0].type, 'brand.created');
      assert.ok(took >= 250 && took < 2000, `took ${took} ms`);
    });

    it('long-polls: a write by another process is seen promptly', async () => {
      const other = t.database.open();
      try {
        const head = (await t.get('/api/v2/changes/head', all)).json().seq as number;
        const started = Date.now();
        const pending = t.get(`/api/v2/changes?after=${head}&wait=20`, all);
        // A write through another connection: no in-process signal, only PostgreSQL's NOTIFY (or SQLite's look every second).
        setTimeout(() => void inTransaction(other, undefined, (w) => recordEvents(w, [{ type: 'brand.updated', resource: 'brand', resourceId: 1, data: { id: 1 } }])), 300);
        const res = await pending;
        const took = Date.now() - started;
        assert.equal(res.json().data[0].type, 'brand.updated');
        assert.ok(took < (dialect === 'postgres' ? 1500 : 2500), `took ${took} ms`);
      } finally {
        await other.close();
      }
    });

    it('long-polls: without events the answer comes when the wait ends, and a credential does not wake for events it cannot see', async () => {
      const brandsOnly = (await t.credential(['changes:read', 'brands:read'])).token;
      const head = (await t.get('/api/v2/changes/head', all)).json().seq as number;
      const started = Date.now();
      const pending = t.get(`/api/v2/changes?after=${head}&wait=1.2`, brandsOnly);
      setTimeout(() => void t.admin('POST', '/admin/api/products', product(2)), 200);
      const res = await pending;
      const took = Date.now() - started;
      assert.deepEqual(res.json().data, []);
      assert.equal(res.json().pagination.nextCursor, String(head));
      assert.ok(took >= 1150 && took < 3000, `took ${took} ms`);
    });

    it('prunes events past the retention and answers 410 cursor_expired to positions before them', async () => {
      const db = t.database.store.db;
      const head = (await t.get('/api/v2/changes/head', all)).json().seq as number;
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      await db.updateTable('events').set({ occurred_at: old }).where('seq', '<=', 10).execute();
      const deleted = await pruneOnce(t.ctx);
      assert.equal(deleted, 10);
      const gone = await t.get('/api/v2/changes?after=0', all);
      assert.equal(gone.statusCode, 410);
      assert.equal(gone.json().code, 'cursor_expired');
      assert.equal((await t.get('/api/v2/changes?after=9', all)).statusCode, 410);
      const kept = await t.get('/api/v2/changes?after=10&limit=1', all);
      assert.equal(kept.statusCode, 200);
      assert.equal(kept.json().data[0].seq, 11);
      assert.equal((await t.get('/api/v2/changes/head', all)).json().seq, head);

      // Everything pruned: the head still tells where to follow from, and following from it works.
      await db.updateTable('events').set({ occurred_at: old }).execute();
      await pruneOnce(t.ctx);
      assert.equal((await t.get('/api/v2/changes/head', all)).json().seq, head);
      assert.equal((await t.get(`/api/v2/changes?after=${head}`, all)).statusCode, 200);
      assert.equal((await t.get(`/api/v2/changes?after=${head - 1}`, all)).statusCode, 410);
    });

    // The plan that walked the table was SQLite's (PostgreSQL plans by its statistics, and in a task of its own).
    if (dialect === 'sqlite') it('finds the newest old event one step along the occurred_at index, not by walking the event log back (SQLite\'s plan)', async () => {
      // Asked for the highest seq, SQLite scanned the table from its newest event, reading the whole log when none was old.
      const query = newestEventBefore(t.database.store.db, new Date(Date.now() - 30 * 86_400_000).toISOString()).compile();
      const plan = await t.database.store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
      const steps = plan.rows.map((r) => r.detail);
      assert.ok(steps.some((d) => /^SEARCH events USING COVERING INDEX events_occurred/.test(d)), steps.join(' | '));
      assert.ok(!steps.some((d) => /^SCAN/.test(d) || /TEMP B-TREE/.test(d)), steps.join(' | '));
    });
  });
}
