import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import type { EventBus } from '../events/bus.ts';
import type { ListingPage, MainStoreClient, SyncLog } from './client.ts';
import type { Mirror, Mirrors } from './mirrors.ts';
import { applyRange } from './apply-range.ts';
import { restoreIndexes } from './deferred-indexes.ts';
import { beginCopy, endCopy } from './first-copy.ts';
import { beginSnapshot, finishSnapshot } from './state.ts';
import { checkListingPage } from './validate.ts';
import { bootstrapFromSnapshots, forgetProgress } from './bulk.ts';

export const SNAPSHOT_PAGE = 1000;

export interface SnapshotResult {
  head: number;
  items: number;
  changes: number;
  deferred: number;
  ms: number;
  /** How the copy was made: the main store's snapshots, or paging through its listings (an older main store). */
  via: 'snapshots' | 'paging';
}

/** Copies one collection page by page through the listing (keyset by id), each page in a local transaction (see applyRange). */
async function copyCollection(store: Store, client: MainStoreClient, mirrors: Mirrors, m: Mirror, bus?: EventBus): Promise<{ items: number; changes: number; deferred: number }> {
  const collection = m.def.collection;
  let after = 0;
  let items = 0;
  let changes = 0;
  let deferred = 0;
  const firstCopy = await beginCopy(store, m);
  let next: Promise<ListingPage> = client.list(collection, undefined, SNAPSHOT_PAGE);
  for (;;) {
    const page = await next;
    checkListingPage(m, page);
    const cursor = page.pagination.hasMore ? page.pagination.nextCursor : null;
    // The next page travels while this one is written.
    if (cursor) {
      next = client.list(collection, cursor, SNAPSHOT_PAGE);
      next.catch(() => undefined);
    }
    const result = await applyRange(store, mirrors, m, page.data, after, !cursor, bus, firstCopy);
    items += page.data.length;
    changes += result.changes;
    deferred += result.deferred;
    after = result.through;
    if (!cursor) {
      await endCopy(store, m);
      return { items, changes, deferred };
    }
  }
}

/**
 * Bootstraps from the main store: through its snapshots when it has them (bulk.ts: a consistent NDJSON file
 * per collection, then the feed from the smallest of their `seq`s), otherwise by reading its head and paging
 * every followed collection through the listings, then the feed from that head. Changes made while the copy
 * runs are in the feed after that position, so they are applied afterwards; applying a state twice is harmless.
 */
export async function takeSnapshot(store: Store, client: MainStoreClient, mirrors: Mirrors, log: SyncLog, bus?: EventBus, signal?: AbortSignal, queueWaitMs?: number): Promise<SnapshotResult> {
  const started = Date.now();
  const head = await client.head();
  // Indexes a copy cut off by a crash had dropped are built first: whatever this copy does, no table stays without them.
  await restoreIndexes(store);
  await beginSnapshot(store.db, client.baseUrl, head, nowIso());
  log.info({ source: client.baseUrl, head }, 'sync: snapshot started');
  const bulk = await bootstrapFromSnapshots(store, client, mirrors, log, signal, bus, queueWaitMs);
  if (bulk) {
    await finishSnapshot(store.db, bulk.seq, bulk.changes, nowIso());
    await forgetProgress(store);
    const ms = Date.now() - started;
    log.info({ seq: bulk.seq, items: bulk.items, changes: bulk.changes, deferred: bulk.deferred, ms }, 'sync: snapshots applied; following the feed from the smallest of their seqs');
    return { head: bulk.seq, items: bulk.items, changes: bulk.changes, deferred: bulk.deferred, ms, via: 'snapshots' };
  }
  log.info({ source: client.baseUrl }, 'sync: the main store has no snapshots (an older version); paging through the listings');
  let items = 0;
  let changes = 0;
  let deferred = 0;
  for (const m of mirrors.list) {
    const t0 = Date.now();
    const r = await copyCollection(store, client, mirrors, m, bus);
    items += r.items;
    changes += r.changes;
    deferred += r.deferred;
    log.info({ collection: m.def.collection, items: r.items, changes: r.changes, deferred: r.deferred, ms: Date.now() - t0 }, 'sync: snapshot copied a collection');
  }
  await finishSnapshot(store.db, head, changes, nowIso());
  const ms = Date.now() - started;
  log.info({ head, items, changes, deferred, ms }, 'sync: snapshot done; following the feed from its head');
  return { head, items, changes, deferred, ms, via: 'paging' };
}
