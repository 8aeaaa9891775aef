import { sql } from 'kysely';
import type { Dialect, Executor, Trx } from '../db/database.ts';
import { getSetting, setSetting } from '../db/settings.ts';
import { EVENT_LOCK } from './log.ts';

/** An event as the log stores it; `data` is still the JSON text written by recordEvents. */
export interface StoredEvent {
  seq: number;
  type: string;
  resource: string;
  resourceId: number;
  occurredAt: string;
  data: string;
}

/** The highest seq ever pruned: a feed position below it has lost events. */
export const PRUNED_THROUGH = 'events_pruned_through';

export interface ReadChanges {
  after: number;
  limit: number;
  /** Event resources the reader may see; undefined means all of them. */
  resources?: readonly string[];
  /**
   * The credential reading. Events about a credential's own things (its snapshot jobs, resource `snapshot`) are
   * shown to that credential only; without a reader they are left out (docs/snapshots.md).
   */
  credentialId?: number;
}

/** The event resource of snapshot jobs (src/snapshots/events.ts), whose events belong to one credential. */
const OWN_RESOURCE = 'snapshot';

/** Events after `after` in seq order, at most `limit`, only of the given resources. */
export async function readEvents(db: Executor, r: ReadChanges): Promise<StoredEvent[]> {
  if (r.resources && r.resources.length === 0) return [];
  let q = db
    .selectFrom('events')
    .select(['seq', 'type', 'resource', 'resource_id as resourceId', 'occurred_at as occurredAt', 'data'])
    .where('seq', '>', r.after)
    .orderBy('seq')
    .limit(r.limit);
  const { resources, credentialId } = r;
  q = q.where((eb) => {
    const data = resources ? eb('resource', 'in', resources) : eb('resource', '<>', OWN_RESOURCE);
    if (credentialId === undefined) return data;
    // The snapshot table is not the log's: named in SQL, so that the log's core does not import the snapshots service.
    const own = sql<boolean>`resource = ${OWN_RESOURCE} and resource_id in (select id from snapshots where credential_id = ${credentialId})`;
    return eb.or([data, own]);
  });
  const rows = await q.execute();
  return rows.map((e) => ({ ...e, seq: Number(e.seq), resourceId: Number(e.resourceId) }));
}

export async function prunedThrough(db: Executor): Promise<number> {
  return Number((await getSetting(db, PRUNED_THROUGH)) ?? 0);
}

/**
 * The newest event (by time) that occurred before `before`: one step back along the `occurred_at` index. Asked
 * for the highest seq instead (`order by seq desc`, or `max(seq)`), SQLite walked the table back from the newest
 * event until it met an old one, so when none was old it read the whole event log: 1.05 M events took 0.65 s
 * with the file in the page cache and 31 s without, 10 s after every start and then hourly, and better-sqlite3
 * runs a query on the main thread, so the server answered nothing meanwhile. An old event committed after a
 * newer one (a higher seq, an older time) is found by the next turn of `pruneEvents`' loop, which ends when no old
 * event is left: pruned through the same seq as before.
 */
export const newestEventBefore = (db: Executor, before: string) =>
  db.selectFrom('events').select('seq').where('occurred_at', '<', before).orderBy('occurred_at', 'desc').orderBy('seq', 'desc').limit(1);

/**
 * Deletes events that occurred before `before`, in batches so no transaction grows large, and remembers
 * the highest seq deleted so that feed readers behind it learn they missed events (410).
 */
export async function pruneEvents(db: Executor, before: string, batch = 5000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const last = await newestEventBefore(db, before).executeTakeFirst();
    if (!last) return deleted;
    const through = Number(last.seq);
    // The watermark goes first: a reader must never see the gap before it is told about it.
    if (through > (await prunedThrough(db))) await setSetting(db, PRUNED_THROUGH, String(through));
    for (;;) {
      const ids = await db.selectFrom('events').select('seq').where('seq', '<=', through).orderBy('seq').limit(batch).execute();
      if (ids.length === 0) break;
      const result = await db.deleteFrom('events').where('seq', '<=', Number(ids[ids.length - 1].seq)).executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
  }
}

/**
 * For rows written without events of their own (a follower's first copy into an empty table, docs/sync.md):
 * takes the next seq, writes no event under it, and raises the pruned watermark to it, in the caller's
 * transaction. Every feed reader behind that seq then gets `410 cursor_expired` and starts again from a
 * snapshot, which has the rows: nothing written here is missed, and no reader is told about it item by item.
 * Under the event-order lock on PostgreSQL, so that no event with a smaller seq can commit after it.
 */
export async function skipUnrecordedWrite(trx: Trx, dialect: Dialect): Promise<number> {
  let seq: number;
  if (dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${EVENT_LOCK})`.execute(trx);
    const r = await sql<{ seq: string }>`select nextval(pg_get_serial_sequence('events', 'seq')) as seq`.execute(trx);
    seq = Number(r.rows[0].seq);
  } else {
    // AUTOINCREMENT never hands out a seq below sqlite_sequence's: moving it on is taking one.
    const r = await sql<{ seq: number }>`select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0), coalesce((select max(seq) from events), 0)) + 1 as seq`.execute(trx);
    seq = Number(r.rows[0].seq);
    const updated = await sql`update sqlite_sequence set seq = ${seq} where name = 'events'`.execute(trx);
    if (Number(updated.numAffectedRows ?? 0) === 0) await sql`insert into sqlite_sequence (name, seq) values ('events', ${seq})`.execute(trx);
  }
  if (seq > (await prunedThrough(trx))) await setSetting(trx, PRUNED_THROUGH, String(seq));
  return seq;
}
