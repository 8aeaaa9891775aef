import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getSetting } from '../../src/db/settings.ts';
import { readState } from '../../src/sync/state.ts';
import { analyzedTables, dialects } from '../helpers/databases.ts';
import { assertSameData, indexesOf, listAll, mainHead, newProduct, startInstance, syncOnce, type Instance } from './cluster.ts';

/** What the proxy does with a request: pass it on, answer 404 (an older main store), or cut the answer off after some bytes. */
type Rule = (req: http.IncomingMessage, answer?: http.IncomingMessage) => 'pass' | 'missing' | { cutAfter: number };

/** A loopback proxy in front of the main store, to play an older main store or a connection lost mid-download. */
async function proxy(target: string, rule: Rule): Promise<{ url: string; seen: Array<{ url: string; range?: string }>; close(): Promise<void> }> {
  const seen: Array<{ url: string; range?: string }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', range: req.headers.range });
    if (rule(req) === 'missing') {
      res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{"status":404,"code":"not_found","title":"Not found"}');
      return;
    }
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      const what = rule(req, answer);
      if (what === 'pass' || what === 'missing') return answer.pipe(res);
      let sent = 0;
      answer.on('data', (piece: Buffer) => {
        if (sent >= what.cutAfter) return;
        const part = piece.subarray(0, what.cutAfter - sent);
        sent += part.length;
        // Destroyed once these bytes are on their way: the client has them, then the connection drops.
        res.write(part, () => sent >= what.cutAfter && res.destroy());
      });
      answer.on('end', () => res.end());
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

for (const dialect of await dialects()) {
  describe(`initial sync through snapshots (${dialect})`, () => {
    let main: Instance;

    before(async () => {
      main = await startInstance(dialect, { seed: 300, env: { SNAPSHOT_POLL_MS: '50' } });
    });
    after(() => main?.close());
    /** Snapshot jobs the main store has been asked for so far. */
    const jobsOfMain = async () => (await main.database.store.db.withTables<{ snapshots: { id: number } }>().selectFrom('snapshots').select('id').execute()).length;

    it('copies every followed collection from NDJSON snapshots and follows the feed from the smallest seq', async () => {
      const follower = await startInstance(dialect);
      try {
        const outcome = await syncOnce(main, follower);
        assert.equal(outcome.snapshot?.via, 'snapshots');
        const counts = await assertSameData(main, follower);
        assert.equal(counts.products, 300);
        assert.ok(counts['product-parameters'] > 900, JSON.stringify(counts));
        assert.equal((await listAll(follower, 'orders')).length, 0);
        // The progress of the bootstrap is forgotten once it is done; the cursor is at the main store's head.
        assert.equal(await getSetting(follower.database.store.db, 'sync_snapshot_jobs'), undefined);
        assert.equal((await readState(follower.database.store.db))?.cursorSeq, await mainHead(main));
        if (dialect === 'postgres') {
          // The copied tables are planned from statistics of the copy, not from none until autovacuum's next round.
          const analyzed = await analyzedTables(follower.database.store);
          for (const table of ['products', 'product_parameters', 'product_filters', 'brands', 'categories', 'parameters', 'filters', 'filter_values']) {
            assert.ok(analyzed.has(table), `${table} has statistics: ${[...analyzed].join(', ')}`);
          }
        }
        // A first copy into an empty store records no event per item (docs/sync.md, "Its own events"): its own
        // feed tells a reader from before the copy to start again from a snapshot (410), and starts after it.
        const db = follower.database.store.db;
        assert.equal((await db.selectFrom('events').select('seq').execute()).length, 0);
        const pruned = Number(await getSetting(db, 'events_pruned_through'));
        assert.ok(pruned > 0, `events_pruned_through ${pruned}`);
        const token = await follower.token();
        const behind = await fetch(`${follower.url}/api/v2/changes?after=0`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(behind.status, 410);
        assert.equal(((await behind.json()) as { code: string }).code, 'cursor_expired');
        const head = (await (await fetch(`${follower.url}/api/v2/changes/head`, { headers: { authorization: `Bearer ${token}` } })).json()) as { seq: number };
        assert.equal(head.seq, pruned);
        // Changes after the snapshots arrive through the feed.
        const created = await main.admin('POST', '/admin/api/products', newProduct(9001));
        assert.equal(created.status, 201);
        await main.admin('PATCH', '/admin/api/products/5', { name: 'Changed after the snapshots' });
        await syncOnce(main, follower);
        await assertSameData(main, follower);
        // What the feed brought after the copy is in the follower's own feed, after the gap.
        const later = await db.selectFrom('events').select(['seq', 'type', 'resource_id']).execute();
        assert.ok(later.some((e) => e.type === 'product.created' && Number(e.resource_id) === Number(created.body.id)), JSON.stringify(later));
        assert.ok(later.every((e) => Number(e.seq) > pruned), JSON.stringify(later));
      } finally {
        await follower.close();
      }
    });

    it('copies text of two-, three- and four-byte characters whole, wherever the file\'s pieces are cut', async () => {
      // Descriptions of multi-byte characters: the NDJSON file comes through gunzip in pieces of 16 kB, and at
      // most of their boundaries a character is cut in two. Each piece decoded on its own would turn both halves
      // into U+FFFD.
      const other = await startInstance(dialect, { seed: 10, env: { SNAPSHOT_POLL_MS: '50' } });
      const follower = await startInstance(dialect);
      try {
        const text = 'žluťoučký kůň úpěl ďábelské ódy € 😀 ';
        for (let id = 1; id <= 10; id++) {
          const res = await other.admin('PATCH', `/admin/api/products/${id}`, { description: text.repeat(200 + id * 37), name: `Kůň ${id} 😀` });
          assert.equal(res.status, 200);
        }
        const outcome = await syncOnce(other, follower);
        assert.equal(outcome.snapshot?.via, 'snapshots');
        await assertSameData(other, follower);
        const copied = await listAll(follower, 'products');
        assert.ok(copied.every((p) => !String(p.description).includes('\ufffd')), 'no character was cut');
        assert.equal(copied.find((p) => p.id === 3)?.description, text.repeat(200 + 3 * 37));
      } finally {
        await follower.close();
        await other.close();
      }
    });

    it('a follower stopped mid-copy goes on with the same jobs after its restart, skipping what it applied', async () => {
      const follower = await startInstance(dialect);
      try {
        const stop = new AbortController();
        const log = { info: (_o: object, msg: string) => msg.includes('snapshot file applied') && stop.abort(), warn: () => {}, error: () => {} };
        await syncOnce(main, follower, { signal: stop.signal, log });
        const kept = JSON.parse((await getSetting(follower.database.store.db, 'sync_snapshot_jobs'))!) as { jobs: Record<string, { id: number; applied?: number }> };
        assert.equal(Object.values(kept.jobs).filter((j) => j.applied !== undefined).length, 1);
        // The file applied and the next one, asked for once the first was made (bulk.ts): two jobs, one unfinished.
        assert.equal(Object.keys(kept.jobs).length, 2);
        assert.equal((await readState(follower.database.store.db))?.phase, 'snapshot');
        const jobsBefore = await jobsOfMain();
        const outcome = await syncOnce(main, follower);
        assert.equal(outcome.snapshot?.via, 'snapshots');
        // Two were asked for before the stop; the restart went on with the second and asked only for the three others.
        assert.equal((await jobsOfMain()) - jobsBefore, 3);
        await assertSameData(main, follower);
      } finally {
        await follower.close();
      }
    });

    it('resumes a download cut off mid-file with Range, and ends equal', async () => {
      const follower = await startInstance(dialect);
      let cut = 0;
      // The first file of more than 10 kB breaks off after 2000 bytes, as if the main store went away.
      const front = await proxy(main.url, (req, answer) =>
        answer && /\/snapshots\/\d+\/file$/.test(req.url ?? '') && !req.headers.range && Number(answer.headers['content-length']) > 10_000 && cut++ === 0 ? { cutAfter: 2000 } : 'pass');
      try {
        const outcome = await syncOnce({ ...main, url: front.url }, follower, { backoff: { baseMs: 10, capMs: 50 } });
        assert.equal(outcome.snapshot?.via, 'snapshots');
        assert.ok(front.seen.some((r) => r.range === 'bytes=2000-'), JSON.stringify(front.seen.filter((r) => r.url.includes('/file'))));
        await assertSameData(main, follower);
      } finally {
        await front.close();
        await follower.close();
      }
    });

    it('pages through the listings when the main store keeps its snapshot queued too long, and cancels the jobs it asked for', async () => {
      // No node of this main store runs jobs (SNAPSHOTS_PER_NODE=0): they stay queued for ever.
      const idle = await startInstance(dialect, { seed: 30, env: { SNAPSHOTS_PER_NODE: '0' } });
      const follower = await startInstance(dialect);
      try {
        const warnings: string[] = [];
        const log = { info: () => {}, warn: (_o: object, msg: string) => warnings.push(msg), error: () => {} };
        const outcome = await syncOnce(idle, follower, { snapshotQueueWaitMs: 300, log });
        assert.equal(outcome.snapshot?.via, 'paging');
        assert.ok(warnings.some((w) => w.includes('has not started the snapshot')), JSON.stringify(warnings));
        await assertSameData(idle, follower);
        // A cancelled queued job is removed (docs/snapshots.md): none of those it asked for is left.
        const jobs = await idle.database.store.db.withTables<{ snapshots: { id: number } }>().selectFrom('snapshots').select('id').execute();
        assert.equal(jobs.length, 0);
        assert.equal(await getSetting(follower.database.store.db, 'sync_snapshot_jobs'), undefined);
      } finally {
        await follower.close();
        await idle.close();
      }
    });

    it('falls back to paging through the listings when the main store has no snapshots (404)', async () => {
      const follower = await startInstance(dialect);
      const older = await proxy(main.url, (req) => (req.url?.startsWith('/api/v2/snapshots') ? 'missing' : 'pass'));
      try {
        const outcome = await syncOnce({ ...main, url: older.url }, follower);
        assert.equal(outcome.snapshot?.via, 'paging');
        await assertSameData(main, follower);
        // The first copy by paging defers the plain indexes too (first-copy.ts), and builds every one of them again.
        for (const table of ['products', 'product_parameters', 'product_filters']) {
          assert.deepEqual(await indexesOf(follower.database.store, table), await indexesOf(main.database.store, table), table);
        }
        assert.equal(await getSetting(follower.database.store.db, 'sync_deferred_indexes'), undefined);
      } finally {
        await older.close();
        await follower.close();
      }
    });
  });
}
