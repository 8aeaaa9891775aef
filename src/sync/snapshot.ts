import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import type { EventBus } from '../events/bus.ts';
import { addDelete, addUpsert, applyChangeSet, emptyChangeSet, positiveId } from './apply.ts';
import type { ListingPage, MainStoreClient, SyncLog } from './client.ts';
import type { Mirror, Mirrors } from './mirrors.ts';
import { idsInRange, relaxedCommit } from './rows.ts';
import { beginSnapshot, finishSnapshot } from './state.ts';
import { checkListingPage } from './validate.ts';

export const SNAPSHOT_PAGE = 1000;

export interface SnapshotResult {
  head: number;
  items: number;
  changes: number;
  deferred: number;
  ms: number;
}

/**
 * Copies one collection page by page (keyset by id), each page in a local transaction. Local rows whose
 * ids fall in a page's range but are not in it no longer exist on the main store and are deleted, so a
 * follower with stale or extra rows ends equal, without holding every id in memory.
 */
async function copyCollection(store: Store, client: MainStoreClient, mirrors: Mirrors, m: Mirror, bus?: EventBus): Promise<{ items: number; changes: number; deferred: number }> {
  const collection = m.def.collection;
  let after = 0;
  let items = 0;
  let changes = 0;
  let deferred = 0;
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
    const ids = page.data.map((item) => positiveId(item.id, `a ${collection} item`));
    const last = ids.length ? Math.max(...ids) : after;
    const recorded = { events: 0 };
    const result = await store.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, store.dialect);
      const set = emptyChangeSet();
      for (const item of page.data) addUpsert(set, collection, item);
      const seen = new Set(ids);
      for (const id of await idsInRange(trx, m.table, after, cursor ? last : undefined)) if (!seen.has(id)) addDelete(set, collection, id);
      return applyChangeSet({ trx, dialect: store.dialect, now: nowIso(), recorded }, set, mirrors);
    });
    // Woken after the commit, by the write path (this store's own webhook dispatcher and long-polling readers).
    if (recorded.events > 0) bus?.appended();
    items += ids.length;
    changes += result.changed;
    deferred += result.deferred;
    after = last;
    if (!cursor) return { items, changes, deferred };
  }
}

/**
 * Bootstraps from the main store: reads its head first, copies every followed collection through the
 * listings, then the follower goes on from that head. Changes made while the copy runs are in the feed
 * after the head, so they are applied afterwards; applying a state twice is harmless.
 */
export async function takeSnapshot(store: Store, client: MainStoreClient, mirrors: Mirrors, log: SyncLog, bus?: EventBus): Promise<SnapshotResult> {
  const started = Date.now();
  const head = await client.head();
  await beginSnapshot(store.db, client.baseUrl, head, nowIso());
  log.info({ source: client.baseUrl, head }, 'sync: snapshot started');
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
  return { head, items, changes, deferred, ms };
}
