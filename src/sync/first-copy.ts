import { sql } from 'kysely';
import type { Store, Trx } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { isConstraintViolation } from '../db/constraint.ts';
import { analyzeTables } from '../db/statistics.ts';
import { skipUnrecordedWrite } from '../events/feed.ts';
import { deferIndexes, restoreIndexes } from './deferred-indexes.ts';
import type { Row } from '../resources/types.ts';
import { positiveId, writable } from './apply.ts';
import { upsertDefinitions } from './definitions.ts';
import type { Mirror } from './mirrors.ts';
import { bumpSequences, relaxedCommit, upsertById } from './rows.ts';

/**
 * The first copy of a collection into a table that was empty when the copy began (a new follower). There
 * is nothing local to compare with, to move aside or to delete, and nobody was told about rows that were
 * never here, so the items are written as they come, with no read-back and no event per item: that work is
 * most of what the general apply path (apply.ts) costs, and it is what keeps a first copy of 100 000 products
 * from taking seconds instead of minutes. Readers of this store's own feed behind the copy learn of it as of a
 * gap (`skipUnrecordedWrite`: `410 cursor_expired`, then a snapshot of this store), in the batch's own
 * transaction. The checks that keep every row writable stay: references must exist (an item of a later state
 * waits for its event, like in apply.ts), and lookup rows are created as in apply.ts.
 */

async function isEmptyTable(store: Store, table: string): Promise<boolean> {
  const r = await sql<{ one: number }>`select 1 as one from ${sql.table(table)} limit 1`.execute(store.db);
  return r.rows.length === 0;
}

/**
 * Before a collection is copied: whether its table is empty, so that the copy takes the first-copy path, with
 * the table's plain indexes dropped until it ends (deferred-indexes.ts). A table that holds rows is copied by
 * the general path, with every index (those of a copy cut off earlier are built again first).
 */
export async function beginCopy(store: Store, m: Mirror): Promise<boolean> {
  if (await isEmptyTable(store, m.table)) {
    await deferIndexes(store, m.table);
    return true;
  }
  await restoreIndexes(store, m.table);
  return false;
}

/**
 * After a collection's copy: its deferred indexes are built again, and PostgreSQL's planner is given statistics
 * of the rows (statistics.ts), so that the follower's first reads of them are planned like any later ones.
 */
export async function endCopy(store: Store, m: Mirror): Promise<void> {
  await restoreIndexes(store, m.table);
  await analyzeTables(store.db, store.dialect, [m.table, ...(m.def.lookups ?? []).map((l) => l.table)]);
}

export interface FirstCopyResult {
  /** Rows written. */
  changes: number;
  /** Items whose references do not exist here (a state later than the collection they refer to): left to the feed. */
  deferred: number;
  through: number;
}

async function write(trx: Trx, store: Store, m: Mirror, items: Row[]): Promise<{ changes: number; deferred: number }> {
  const lookups = m.def.lookups ?? [];
  await upsertDefinitions(trx, store.dialect, lookups, items, nowIso());
  const rows = await writable(trx, store.dialect, m, items.map((i) => ({ id: positiveId(i.id, `a ${m.def.collection} item`), ...m.toRow(i) })));
  await upsertById(trx, store.dialect, m.table, rows);
  await bumpSequences(trx, store.dialect, [m.table, ...lookups.map((l) => l.table)]);
  if (rows.length > 0) await skipUnrecordedWrite(trx, store.dialect);
  return { changes: rows.length, deferred: items.length - rows.length };
}

/**
 * Writes one batch of a first copy in one local transaction. Undefined when a row clashed with another on a
 * unique value (a copy paged through the listings mixes moments, so an article number can have moved from an
 * early page's product to a later one's): the transaction is rolled back, and the caller applies the batch
 * through the general path, which resolves such clashes.
 */
export async function writeFirstCopy(store: Store, m: Mirror, items: Row[], after: number): Promise<FirstCopyResult | undefined> {
  const through = items.reduce((max, i) => Math.max(max, Number(i.id)), after);
  try {
    const r = await store.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, store.dialect);
      return write(trx, store, m, items);
    });
    return { ...r, through };
  } catch (error) {
    if (isConstraintViolation(error)) return undefined;
    throw error;
  }
}
