// Usage per credential: counted in memory by each node, flushed as additive upserts, summed across nodes on
// one database, kept when a flush fails, flushed once more when the server stops; and shown on the usage page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startConsoleHousekeeping } from '../../src/console/housekeeping.ts';
import { hourOf, UsageCounter, usageOf } from '../../src/console/usage.ts';
import { usageSince } from '../../src/console/usage.repository.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { anotherNode, signIn } from './console-client.ts';

for (const dialect of await dialects()) {
  describe(`console usage counters (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 2, seed: 2 } });
    });
    after(() => t.close());

    const totals = async (credentialId: number) => {
      const rows = (await usageSince(t.database.store.db, hourOf(Date.now() - 23 * 3_600_000))).filter((r) => r.credentialId === credentialId);
      return { requests: rows.reduce((n, r) => n + r.requests, 0), rateLimited: rows.reduce((n, r) => n + r.rateLimited, 0) };
    };

    it('counts /api/v2 requests and 429s per credential on each node, and the nodes\' flushes add up', async () => {
      const { clientId, token } = await t.credential(['products:read']);
      const id = Number((await t.database.store.db.selectFrom('credentials').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow()).id);
      // A second node whose rate limit lets two requests through.
      const b = await anotherNode(t, { RATE_LIMIT_RPS: '0.001', RATE_LIMIT_BURST: '2' });
      try {
        for (let i = 0; i < 3; i++) assert.equal((await t.get('/api/v2/products', token)).statusCode, 200);
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await b.app.inject({ method: 'GET', url: '/api/v2/products', headers: { authorization: `Bearer ${token}` } })).statusCode);
        assert.deepEqual(statuses, [200, 200, 429, 429]);
        // Unauthenticated requests belong to no credential and are not counted.
        assert.equal((await t.app.inject({ method: 'GET', url: '/api/v2/products' })).statusCode, 401);
        assert.deepEqual(await totals(id), { requests: 0, rateLimited: 0 }, 'nothing is written per request');
        await Promise.all([usageOf(t.ctx).flush(t.database.store.db), usageOf(b.ctx).flush(t.database.store.db)]);
        assert.deepEqual(await totals(id), { requests: 7, rateLimited: 2 });
      } finally {
        await b.app.close();
      }

      const admin = await signIn(t.app);
      const page = await admin.get('/admin/usage');
      assert.equal(page.statusCode, 200);
      const row = new RegExp(`<a href="/admin/credentials/${id}">[^<]+</a></th>\\s*<td data-label="Requests \\(24 h\\)" class="num">7</td>\\s*<td data-label="429s \\(24 h\\)" class="num">2</td>\\s*<td data-label="Last request"><time`);
      assert.match(page.body, row);
      assert.match(page.body, /<svg class="spark"[^>]* role="img" aria-label="Requests of [^"]+ per hour over the last 24 hours; the busiest hour, from \d\d:00 UTC, had 7\."/);
    });

    it('concurrent flushes of many nodes into the same hour lose nothing', async () => {
      const nodes = Array.from({ length: 4 }, () => new UsageCounter());
      const now = Date.now();
      nodes.forEach((node, i) => {
        for (let n = 0; n < 25 * (i + 1); n++) node.count(424242, n % 5 === 0, now);
      });
      await Promise.all(nodes.map((node) => node.flush(t.database.store.db)));
      assert.deepEqual(await totals(424242), { requests: 25 + 50 + 75 + 100, rateLimited: 5 + 10 + 15 + 20 });
      assert.ok(nodes.every((node) => node.size === 0));
    });

    it('counts that could not be written are kept for the next flush', async () => {
      const counter = new UsageCounter();
      for (let n = 0; n < 3; n++) counter.count(515151, false);
      const db = t.database.store.db;
      await sql`alter table credential_usage rename to credential_usage_away`.execute(db);
      try {
        await assert.rejects(counter.flush(db));
      } finally {
        await sql`alter table credential_usage_away rename to credential_usage`.execute(db);
      }
      counter.count(515151, true);
      assert.equal(counter.size, 1, 'the failed counts and the new one share their row');
      await counter.flush(db);
      assert.deepEqual(await totals(515151), { requests: 4, rateLimited: 1 });
    });

    it('the background task flushes when the server stops', async () => {
      const task = await startConsoleHousekeeping(t.ctx);
      usageOf(t.ctx).count(626262, false);
      usageOf(t.ctx).count(626262, true);
      await task!.stop();
      assert.deepEqual(await totals(626262), { requests: 2, rateLimited: 1 });
    });
  });
}
