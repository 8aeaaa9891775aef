import { sql } from 'kysely';
import type { Dialect, Executor, Trx } from '../db/database.ts';

export interface NewEvent {
  type: string;
  resource: string;
  resourceId: number;
  data: unknown;
}

/** A write in progress: its transaction and what the event log needs to know about the database. */
export interface WriteContext {
  trx: Trx;
  dialect: Dialect;
  now: string;
}

// Any constant works; it names the lock that orders event inserts.
const EVENT_LOCK = 7_274_101;

/**
 * Appends events in the caller's transaction, so they commit or vanish with the write. On PostgreSQL an
 * advisory lock held to commit makes `seq` order equal commit order: a follower reading after seq N can
 * never later find a smaller seq committed behind it. SQLite has a single writer, which does the same.
 */
export async function recordEvents(w: WriteContext, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (w.dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${EVENT_LOCK})`.execute(w.trx);
  }
  for (let i = 0; i < events.length; i += 500) {
    await w.trx
      .insertInto('events')
      .values(events.slice(i, i + 500).map((e) => ({ type: e.type, resource: e.resource, resource_id: e.resourceId, occurred_at: w.now, data: JSON.stringify(e.data) })))
      .execute();
  }
  // The payload names the schema, so that stores sharing one database (tests do) wake only their own listeners.
  if (w.dialect === 'postgres') await sql`select pg_notify('store_events', current_schema())`.execute(w.trx);
}

export async function headSeq(db: Executor): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
  return Number(row?.seq ?? 0);
}
