import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { createContext } from '../../src/context.ts';
import { claimNext, findJob } from '../../src/snapshots/jobs.repository.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';
import { createJob, downloadItems, finished, listAll, runnerOf } from './helpers.ts';

for (const dialect of await dialects()) {
  describe(`snapshot runner (${dialect})`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 300, orders: 5, seed: 5 }, env: { SNAPSHOT_POLL_MS: '50', SNAPSHOT_LEASE_SECONDS: '1', SNAPSHOTS_PER_CREDENTIAL: '2' } });
      token = (await t.credential(['products:read', 'brands:read', 'changes:read'])).token;
    });
    after(() => t.close());

    it('a credential over its queued and running jobs gets 429 with Retry-After; another credential does not', async () => {
      const first = await createJob(t, token, { collection: 'brands' });
      const second = await createJob(t, token, { collection: 'brands' });
      const third = await t.app.inject({ method: 'POST', url: '/api/v2/snapshots', headers: { authorization: `Bearer ${token}` }, payload: { collection: 'brands' } });
      problemOf(third, 429, 'rate_limited');
      assert.ok(Number(third.headers['retry-after']) > 0);
      const other = (await t.credential(['brands:read'])).token;
      const theirs = await createJob(t, other, { collection: 'brands' });
      // Cancelling a queued job frees its place.
      for (const id of [first.id, second.id]) {
        assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v2/snapshots/${id}`, headers: { authorization: `Bearer ${token}` } })).statusCode, 204);
      }
      const mine = await createJob(t, token, { collection: 'brands' });
      assert.equal(mine.status, 'queued');
      const runner = runnerOf(t);
      runner.start();
      try {
        assert.equal((await finished(t, other, theirs.id)).status, 'completed');
        // Left queued, it would be the next test's job to claim (the oldest), and one of this credential's two places.
        assert.equal((await finished(t, token, mine.id)).status, 'completed');
      } finally {
        await runner.stop();
      }
    });

    it('a job whose node stopped renewing its claim (killed) goes back to the queue and completes elsewhere', async () => {
      const job = await createJob(t, token, { collection: 'products' });
      // A node claims the job and dies at once: its lease is never renewed.
      const now = new Date();
      const claimed = await claimNext(t.ctx.store, 'killed-node', now.toISOString(), new Date(now.getTime() + 1000).toISOString());
      assert.equal(claimed?.id, job.id);
      assert.equal((await findJob(t.ctx.store.db, job.id))?.status, 'running');
      const runner = runnerOf(t, 'survivor');
      runner.start();
      try {
        const done = await finished(t, token, job.id);
        assert.equal(done.status, 'completed', done.error ?? '');
        assert.equal((await findJob(t.ctx.store.db, job.id))?.attempts, 2);
        assert.deepEqual(await downloadItems(t, token, job.id), await listAll(t, token, 'products'));
      } finally {
        await runner.stop();
      }
    });

    it('a job whose claim lapsed three times fails, with a snapshot.failed event for its credential', async () => {
      const job = await createJob(t, token, { collection: 'brands' });
      const runner = runnerOf(t, 'housekeeper');
      for (let i = 0; i < 3; i++) {
        const past = new Date(Date.now() - 1000).toISOString();
        assert.equal((await claimNext(t.ctx.store, `dead-${i}`, past, past))?.id, job.id);
        await runner.housekeeping();
      }
      const failed = (await findJob(t.ctx.store.db, job.id))!;
      assert.equal(failed.status, 'failed');
      assert.match(failed.error ?? '', /stopped 3 times/);
      const events = (await t.get('/api/v2/changes?limit=1000', token)).json() as { data: Array<{ type: string; resourceId: number }> };
      assert.ok(events.data.some((e) => e.type === 'snapshot.failed' && e.resourceId === job.id));
    });
  });
}

// Two nodes on one PostgreSQL database: each job is claimed by exactly one, and either serves its file.
for (const dialect of (await dialects()).filter((d) => d === 'postgres')) {
  describe('snapshots on two nodes of one PostgreSQL database', () => {
    let a: TestApp;
    let b: Pick<TestApp, 'ctx'> & { app: TestApp['app'] };
    let token: string;

    before(async () => {
      a = await createTestApp(dialect, { seed: { products: 200, orders: 5, seed: 9 }, env: { SNAPSHOT_POLL_MS: '20', SNAPSHOTS_PER_NODE: '2', SNAPSHOTS_PER_CREDENTIAL: '10' } });
      const ctx = await createContext(a.config, a.database.open());
      b = { ctx, app: await buildApp(ctx, { logger: false }) };
      token = (await a.credential(['products:read', 'brands:read', 'categories:read'])).token;
    });
    after(async () => {
      await b.app.close();
      await b.ctx.store.close();
      await a.close();
    });

    it('jobs created on one node are run once each, by either node, and downloaded from the other', async () => {
      const ran: Array<{ node: string; snapshot: number }> = [];
      const logOf = (node: string) => ({ info: (o: object, msg: string) => msg.includes('completed') && ran.push({ node, snapshot: (o as { snapshot: number }).snapshot }), warn: () => {}, error: () => {} });
      const runners = [runnerOf(a, 'node-a', logOf('node-a')), runnerOf(b, 'node-b', logOf('node-b'))];
      for (const r of runners) r.start();
      try {
        const collections = ['products', 'brands', 'categories', 'products', 'brands', 'categories'];
        const jobs = [];
        for (const collection of collections) jobs.push(await createJob(a, token, { collection }));
        for (const job of jobs) assert.equal((await finished(a, token, job.id)).status, 'completed');
        assert.deepEqual(ran.map((r) => r.snapshot).sort((x, y) => x - y), jobs.map((j) => j.id));
        for (const job of jobs) assert.equal((await findJob(a.ctx.store.db, job.id))?.attempts, 1);
        const fromB = await b.app.inject({ method: 'GET', url: `/api/v2/snapshots/${jobs[0].id}/file`, headers: { authorization: `Bearer ${token}` } });
        assert.equal(fromB.statusCode, 200);
        const viaSigned = (await b.app.inject({ method: 'GET', url: `/api/v2/snapshots/${jobs[0].id}`, headers: { authorization: `Bearer ${token}` } })).json() as { downloadUrl: string };
        const signed = new URL(viaSigned.downloadUrl);
        const plain = await a.app.inject({ method: 'GET', url: `${signed.pathname}${signed.search}` });
        assert.deepEqual(plain.rawPayload, fromB.rawPayload);
      } finally {
        for (const r of runners) await r.stop();
      }
    });
  });
}
