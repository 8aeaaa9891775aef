import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { Store } from '../db/database.ts';
import { getSetting, setSetting } from '../db/settings.ts';
import type { EventBus } from '../events/bus.ts';
import { backoffDelay, DEFAULT_BACKOFF, sleep } from './backoff.ts';
import { SyncError, type MainStoreClient, type SyncLog } from './client.ts';
import type { Mirror, Mirrors } from './mirrors.ts';
import { applyRange } from './apply-range.ts';
import { beginCopy, endCopy } from './first-copy.ts';
import { checkListingPage } from './validate.ts';

/** Items per local transaction while a snapshot's file is applied. */
export const BULK_BATCH = 1000;
/** The same into an empty table (first-copy.ts): fewer, larger commits; a batch of products is a few MB while it is written. */
const FIRST_COPY_BATCH = 5000;
/** The longest line of a snapshot file read: a product with long texts is a few kB; a line beyond this is refused, not held. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** Tries of one file's download (each resuming where the last stopped) before the whole step is retried by the follower. */
const DOWNLOAD_TRIES = 8;
/** The follower's progress through a bootstrap by snapshots, kept in `settings`, so that a restart goes on from it. */
const PROGRESS_KEY = 'sync_snapshot_jobs';

interface Job {
  id: number;
  status: string;
  seq: number | null;
  sha256: string | null;
  error: string | null;
}

/** Per collection: the main store's job, and once its file is applied, the `seq` it holds. */
interface Progress {
  source: string;
  jobs: Record<string, { id: number; applied?: number }>;
}

export interface BulkResult {
  /** The smallest `seq` of the snapshots: the feed is followed from it. */
  seq: number;
  items: number;
  changes: number;
  deferred: number;
}

async function readProgress(store: Store, source: string): Promise<Progress> {
  const raw = await getSetting(store.db, PROGRESS_KEY);
  const saved = raw ? (JSON.parse(raw) as Progress) : undefined;
  return saved?.source === source ? saved : { source, jobs: {} };
}

const saveProgress = (store: Store, p: Progress) => setSetting(store.db, PROGRESS_KEY, JSON.stringify(p));

/** Forgets the progress: the next bootstrap asks for fresh snapshots (after it finished, or when the follower starts over). */
export const forgetProgress = (store: Store) => store.db.deleteFrom('settings').where('key', '=', PROGRESS_KEY).execute();

/** Asks for an NDJSON snapshot of a collection; undefined when the main store has no snapshots (404, or no job: an older version). */
async function requestSnapshot(client: MainStoreClient, collection: string): Promise<Job | undefined> {
  let job: Job;
  try {
    job = await client.post<Job>('/api/v2/snapshots', { collection, format: 'ndjson' });
  } catch (error) {
    if (error instanceof SyncError && error.status === 404) return undefined;
    throw error;
  }
  // An answer that is not a job is a main store that does not know snapshots either: it is paged.
  return Number.isSafeInteger(job?.id) && job.id > 0 && typeof job.status === 'string' ? job : undefined;
}

/** How long a follower waits for a snapshot job the main store has not started (SYNC_SNAPSHOT_QUEUE_WAIT_MS) before it pages instead. */
export const SNAPSHOT_QUEUE_WAIT_MS = 5 * 60_000;

/** The main store keeps a job queued longer than the follower waits (all its slots busy, or no node runs jobs): paging is sooner. */
class QueuedTooLong extends Error {}

/**
 * Waits for a job to finish; a failed, expired or vanished job is undefined (the caller asks again). A job
 * still `queued` after `queueWaitMs` throws QueuedTooLong; once it runs, it is waited for to its end.
 */
async function completed(client: MainStoreClient, id: number, signal: AbortSignal | undefined, queueWaitMs: number): Promise<Job | undefined> {
  const since = Date.now();
  // At most 200 ms between looks: the main store makes the files one after another and the follower asks for
  // the next only once it sees this one made, so every moment between completion and the look is the sync's
  // own time (at 500 ms, about a second over a first copy's three large files); a look is one small GET.
  for (let wait = 50; ; wait = Math.min(wait * 2, 200)) {
    let job: Job;
    try {
      job = await client.get<Job>(`/api/v2/snapshots/${id}`);
    } catch (error) {
      if (error instanceof SyncError && error.status === 404) return undefined;
      throw error;
    }
    if (job.status === 'completed') return job;
    if (job.status === 'failed' || job.status === 'expired') return undefined;
    if (job.status !== 'queued' && job.status !== 'running') throw new SyncError(`the main store answered snapshot ${id} with no status it documents`, 'permanent');
    if (job.status === 'queued' && Date.now() - since > queueWaitMs) throw new QueuedTooLong();
    await sleep(wait, signal);
  }
}

/** Cancels the jobs asked for and not applied, so that an abandoned bootstrap does not keep the main store busy; best effort. */
async function abandon(client: MainStoreClient, progress: Progress, log: SyncLog): Promise<void> {
  for (const entry of Object.values(progress.jobs)) {
    if (entry.applied !== undefined) continue;
    await client.delete(`/api/v2/snapshots/${entry.id}`).catch((error: unknown) => log.warn({ snapshot: entry.id, error: (error as Error).message }, 'sync: could not cancel a snapshot job'));
  }
}

/**
 * NDJSON lines out of a gzipped download that may break off: each try asks for the bytes after those already
 * received (`Range`, with `If-Range` so that only the same file is continued) and feeds them to the one
 * gunzip, so a lost main store costs a reconnect, not the download. Yields the items of each line.
 */
async function* itemsOf(client: MainStoreClient, job: Job, log: SyncLog, signal: AbortSignal | undefined): AsyncGenerator<Record<string, unknown>> {
  const gunzip = createGunzip();
  const etag = job.sha256 ? `"${job.sha256}"` : undefined;
  let received = 0;
  /** The file's size, from the first answer: all of it received is the end, however the connection closed. */
  let size: number | undefined;
  let tries = 0;
  let ended = false;
  let failure: Error | undefined;
  // Feeds the gunzip from the network in the background, resuming after failures; the lines are read below.
  const feeding = (async () => {
    while (!ended) {
      try {
        const res = await client.snapshotFile(job.id, received, etag);
        if (received > 0 && res.status !== 206) throw new SyncError(`the file of snapshot ${job.id} changed during its download`, 'permanent');
        if (res.status === 200) size = Number(res.header('content-length') ?? NaN);
        for await (const piece of res.body) {
          received += (piece as Buffer).length;
          tries = 0;
          if (!gunzip.write(piece)) await new Promise((resolve) => gunzip.once('drain', resolve));
        }
        if (!res.body.complete && !(size !== undefined && received >= size)) throw new SyncError(`the download of snapshot ${job.id} broke off`, 'transient');
        ended = true;
        gunzip.end();
      } catch (error) {
        const e = error instanceof SyncError ? error : new SyncError(`the download of snapshot ${job.id}: ${(error as Error).message}`, 'transient');
        if (e.kind !== 'transient' || ++tries >= DOWNLOAD_TRIES || signal?.aborted) {
          failure = e;
          gunzip.destroy(e);
          return;
        }
        const delay = e.retryAfterMs ?? backoffDelay(tries, DEFAULT_BACKOFF);
        log.warn({ snapshot: job.id, received, error: e.message, retryInMs: Math.round(delay) }, 'sync: snapshot download interrupted; resuming');
        await sleep(delay, signal).catch(() => undefined);
      }
    }
  })();
  let rest = '';
  // gunzip's pieces end wherever its buffer does, often inside a character of two to four bytes: a piece
  // decoded on its own would turn both halves into U+FFFD. The decoder keeps such a tail for the next piece.
  const utf8 = new StringDecoder('utf8');
  try {
    for await (const piece of gunzip) {
      const text = rest + utf8.write(piece as Buffer);
      const lines = text.split('\n');
      rest = lines.pop()!;
      if (rest.length > MAX_LINE_BYTES) throw new SyncError(`snapshot ${job.id} has a line longer than ${MAX_LINE_BYTES} bytes`, 'permanent');
      for (const line of lines) if (line) yield JSON.parse(line) as Record<string, unknown>;
    }
    rest += utf8.end();
    if (rest.trim()) yield JSON.parse(rest) as Record<string, unknown>;
  } catch (error) {
    throw failure ?? error;
  } finally {
    ended = true;
    gunzip.destroy();
    await feeding;
  }
  if (failure) throw failure;
}

/** Applies one file: batches of BULK_BATCH items (FIRST_COPY_BATCH into an empty table), each a local transaction that also deletes the local rows absent in its id range. */
async function applyFile(store: Store, client: MainStoreClient, mirrors: Mirrors, m: Mirror, job: Job, log: SyncLog, signal: AbortSignal | undefined, bus?: EventBus) {
  let after = 0;
  let items = 0;
  let changes = 0;
  let deferred = 0;
  let batch: Array<Record<string, unknown>> = [];
  const firstCopy = await beginCopy(store, m);
  const flush = async (last: boolean) => {
    // The items of a file are checked against this version's item schema like a listing page is.
    checkListingPage(m, { data: batch, pagination: { hasMore: !last, nextCursor: null } });
    const r = await applyRange(store, mirrors, m, batch, after, last, bus, firstCopy);
    items += batch.length;
    changes += r.changes;
    deferred += r.deferred;
    after = r.through;
    batch = [];
  };
  for await (const item of itemsOf(client, job, log, signal)) {
    batch.push(item);
    if (batch.length >= (firstCopy ? FIRST_COPY_BATCH : BULK_BATCH)) await flush(false);
  }
  await flush(true);
  await endCopy(store, m);
  return { items, changes, deferred };
}

/**
 * The initial copy through the main store's snapshots (API.md §5a): one NDJSON snapshot per followed
 * collection, each applied in
 * the sync order as it is streamed in. The feed is then followed from the smallest of their `seq`s: a change
 * after it may be applied again over a file that already had it, which is harmless, and none is lost.
 * Progress (the jobs, the collections applied) is kept, so a restart goes on where it stopped. Undefined when
 * the main store has no snapshots (an older version), or keeps a job queued longer than `queueWaitMs` (its
 * jobs are then cancelled): the caller pages through the listings instead, from the head it read before.
 */
export async function bootstrapFromSnapshots(store: Store, client: MainStoreClient, mirrors: Mirrors, log: SyncLog, signal: AbortSignal | undefined, bus?: EventBus, queueWaitMs = SNAPSHOT_QUEUE_WAIT_MS): Promise<BulkResult | undefined> {
  const progress = await readProgress(store, client.baseUrl);
  const result: BulkResult = { seq: Infinity, items: 0, changes: 0, deferred: 0 };
  const ask = async (m: Mirror): Promise<boolean> => {
    const collection = m.def.collection;
    if (progress.jobs[collection]) return true;
    const job = await requestSnapshot(client, collection);
    if (!job) return false;
    progress.jobs[collection] = { id: job.id };
    await saveProgress(store, progress);
    return true;
  };
  // The first request tells whether the main store has snapshots at all.
  if (!(await ask(mirrors.list[0]))) return undefined;
  for (const [i, m] of mirrors.list.entries()) {
    const collection = m.def.collection;
    const t0 = Date.now();
    if (!(await ask(m))) throw new SyncError('the main store stopped offering snapshots', 'transient');
    for (let tries = 0; ; tries++) {
      const entry = progress.jobs[collection];
      if (entry.applied !== undefined) {
        result.seq = Math.min(result.seq, entry.applied);
        break;
      }
      let job: Job | undefined;
      try {
        job = await completed(client, entry.id, signal, queueWaitMs);
      } catch (error) {
        if (!(error instanceof QueuedTooLong)) throw error;
        log.warn({ collection, snapshot: entry.id, waitedMs: queueWaitMs }, 'sync: the main store has not started the snapshot; paging through the listings instead');
        await abandon(client, progress, log);
        await forgetProgress(store);
        return undefined;
      }
      if (!job || job.seq === null) {
        if (tries >= 3) throw new SyncError(`the main store could not make a snapshot of ${collection}`, 'transient');
        log.warn({ collection, snapshot: entry.id }, 'sync: a snapshot failed or expired on the main store; asking again');
        delete progress.jobs[collection];
        await ask(m);
        continue;
      }
      // The next file is asked for once this one is made, so that the main store makes it while this one is
      // applied, and makes one at a time: its jobs share one thread, and two at once made each take twice as long
      // while the follower waited for the first (bench/results/sync-2026-11-23-quiet.md). Two unfinished at most.
      const next = mirrors.list[i + 1];
      if (next && !(await ask(next))) throw new SyncError('the main store stopped offering snapshots', 'transient');
      const r = await applyFile(store, client, mirrors, m, job, log, signal, bus);
      result.items += r.items;
      result.changes += r.changes;
      result.deferred += r.deferred;
      result.seq = Math.min(result.seq, job.seq);
      entry.applied = job.seq;
      await saveProgress(store, progress);
      log.info({ collection, snapshot: job.id, seq: job.seq, items: r.items, changes: r.changes, deferred: r.deferred, ms: Date.now() - t0 }, 'sync: snapshot file applied');
      break;
    }
  }
  if (!Number.isFinite(result.seq)) result.seq = 0;
  return result;
}

