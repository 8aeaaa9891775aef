import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import type { EventBus } from '../events/bus.ts';
import { addDelete, addUpsert, applyChangeSet, emptyChangeSet, positiveId } from './apply.ts';
import { writeFirstCopy } from './first-copy.ts';
import type { Mirror, Mirrors } from './mirrors.ts';
import { idsInRange, relaxedCommit } from './rows.ts';

export interface RangeApplied {
  changes: number;
  deferred: number;
}

/**
 * Writes items of one collection, sorted by id, that are all the main store has with ids after `after` and
 * up to the last of them (through the end when `last` is true), in one local transaction: local rows whose
 * ids fall in that range but are not among the items no longer exist on the main store and are deleted, so
 * a follower with stale or extra rows ends equal without holding every id in memory. `firstCopy`: the table
 * was empty when this copy of it began, so the items take the first-copy path (first-copy.ts), unless a
 * unique value clashes.
 */
export async function applyRange(store: Store, mirrors: Mirrors, m: Mirror, items: Array<Record<string, unknown>>, after: number, last: boolean, bus?: EventBus, firstCopy = false): Promise<RangeApplied & { through: number }> {
  if (firstCopy) {
    const copied = await writeFirstCopy(store, m, items, after);
    if (copied) return copied;
  }
  const collection = m.def.collection;
  const ids = items.map((item) => positiveId(item.id, `a ${collection} item`));
  const through = ids.length ? Math.max(...ids) : after;
  const recorded = { events: 0 };
  const result = await store.db.transaction().execute(async (trx) => {
    await relaxedCommit(trx, store.dialect);
    const set = emptyChangeSet();
    for (const item of items) addUpsert(set, collection, item);
    const seen = new Set(ids);
    for (const id of await idsInRange(trx, m.table, after, last ? undefined : through)) if (!seen.has(id)) addDelete(set, collection, id);
    return applyChangeSet({ trx, dialect: store.dialect, now: nowIso(), recorded }, set, mirrors);
  });
  // Woken after the commit, by the write path (this store's own webhook dispatcher and long-polling readers).
  if (recorded.events > 0) bus?.appended();
  return { changes: result.changed, deferred: result.deferred, through };
}
