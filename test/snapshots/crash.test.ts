import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { seedStore } from '../../src/seed/seed.ts';
import { findJob } from '../../src/snapshots/jobs.repository.ts';
import { snapshotTables } from '../../src/snapshots/tables.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { until } from '../helpers/wait.ts';
import { ndjsonItems } from './helpers.ts';
import { createJobOn, fileOn, finishedOn, jobOn, listOn, serveNode, suiteNodes, tokenOn } from './processes.ts';

/**
 * A short lease, so that the job of a killed node is taken back within seconds (the default is 30 s); not
 * shorter, or on a loaded machine a live node misses its renewals and loses its own claim.
 */
const LEASE = { SNAPSHOT_LEASE_SECONDS: '5' };
const signedPath = (downloadUrl: string | undefined) => {
  const url = new URL(downloadUrl!);
  return `${url.pathname}${url.search}`;
};

for (const dialect of await dialects()) {
  describe(`snapshots: kill -9 of the node running a job (${dialect})`, () => {
    const held = suiteNodes();

    it('the job is run again by the next node and completes; its file equals the listing', { timeout: 480_000 }, async () => {
      const db = (held.db = await createTestDatabase(dialect));
      await seedStore(db.store, { products: 1000, orders: 0, seed: 13 });
      // 100 rows a second holds the job `running` for about ten seconds: time to see it write rows and kill its node.
      const first = await serveNode(db, { ...LEASE, SNAPSHOT_MAX_ROWS_PER_SECOND: '100' });
      held.nodes.push(first);
      const token = await tokenOn(db, first, ['products:read']);
      const job = await createJobOn(first, token, { collection: 'products', format: 'ndjson' });
      const firstNode = `${hostname()}:${first.child.pid}:`;
      await until('the first node runs the job and has written rows', async () => {
        const seen = await jobOn(first, token, job.id);
        assert.notEqual(seen.status, 'completed', 'the job finished before its node could be killed');
        return seen.status === 'running' && seen.rows > 0 && Boolean((await findJob(db.store.db, job.id))!.claimedBy?.startsWith(firstNode));
      }, 120_000, 50);

      await first.kill();
      // What a dead node leaves: a job that says `running`, with a lease nobody renews.
      const orphan = (await findJob(db.store.db, job.id))!;
      assert.equal(orphan.status, 'running');
      assert.ok(orphan.rows > 0);
      assert.equal(orphan.size, null, 'no file was completed');

      const second = await serveNode(db, LEASE);
      held.nodes.push(second);
      const done = await finishedOn(second, token, job.id);
      assert.equal(done.status, 'completed', done.error ?? '');
      assert.equal(done.rows, 1000);
      const row = (await findJob(db.store.db, job.id))!;
      // Twice (by the killed node, then by the next); a third time only if a loaded machine made a live node miss its renewals.
      assert.ok(row.attempts >= 2, `attempts: ${row.attempts}`);
      const running = await snapshotTables(db.store.db).selectFrom('snapshots').select('id').where('status', '=', 'running').execute();
      assert.deepEqual(running, [], 'no job is left running');

      // The file, by the signed URL alone (as curl fetches it): its bytes are what the job says, its items the listing's.
      const gz = await fileOn(second, undefined, signedPath(done.downloadUrl));
      assert.equal(gz.length, done.size);
      assert.equal(createHash('sha256').update(gz).digest('hex'), done.sha256);
      assert.deepEqual(ndjsonItems(gz), await listOn(second, token, 'products'));
      await second.stop();
    });
  });
}

// Two nodes, each its own `serve` process, on one PostgreSQL database: a job created on one is run by a node
// that runs jobs, and its file is served by either.
for (const dialect of (await dialects()).filter((d) => d === 'postgres')) {
  describe('snapshots: two server processes on one PostgreSQL database', () => {
    const held = suiteNodes();

    it('a job created on one node is downloaded from the other, by token and by signed URL', { timeout: 480_000 }, async () => {
      const db = (held.db = await createTestDatabase(dialect));
      await seedStore(db.store, { products: 300, orders: 0, seed: 17 });
      // `runs` runs every job; `serves` runs none (SNAPSHOTS_PER_NODE=0), so which node made each file is known.
      const runs = await serveNode(db, { SNAPSHOTS_PER_NODE: '2' });
      held.nodes.push(runs);
      const serves = await serveNode(db, { SNAPSHOTS_PER_NODE: '0' });
      held.nodes.push(serves);
      const token = await tokenOn(db, runs, ['products:read', 'brands:read']);
      const listed = { products: await listOn(serves, token, 'products'), brands: await listOn(runs, token, 'brands') };
      for (const [creator, other, collection] of [[runs, serves, 'products'], [serves, runs, 'brands']] as const) {
        const job = await createJobOn(creator, token, { collection, format: 'ndjson' });
        const done = await finishedOn(other, token, job.id);
        assert.equal(done.status, 'completed', done.error ?? '');
        // Claimed once (a completed job no longer names its node: `serves` runs none, so `runs` made it).
        assert.equal((await findJob(db.store.db, job.id))!.attempts, 1);
        const byToken = await fileOn(other, token, `/api/v2/snapshots/${job.id}/file`);
        const bySignedUrl = await fileOn(other, undefined, signedPath((await jobOn(creator, token, job.id)).downloadUrl));
        assert.equal(createHash('sha256').update(byToken).digest('hex'), done.sha256);
        assert.deepEqual(bySignedUrl, byToken);
        assert.deepEqual(ndjsonItems(byToken), listed[collection]);
      }
      for (const node of held.nodes) await node.stop();
    });
  });
}
