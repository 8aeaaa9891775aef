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
  /** Set for a bulk write (an import): its events are kept aside and recorded at its end, see stageEvents. */
  stage?: EventStage;
  /** Counts the events recorded, so that the write path wakes the event bus after its commit (see inTransaction). */
  recorded?: { events: number };
}

/** The events of a bulk write so far: how many, and those not yet moved on (to the staging table or the log). */
export interface EventStage {
  count: number;
  buffer: NewEvent[];
}

// Any constant works; it names the lock that orders event inserts.
export const EVENT_LOCK = 7_274_101;

/**
 * Appends events in the caller's transaction, so they commit or vanish with the write. On PostgreSQL an
 * advisory lock held to commit makes `seq` order equal commit order: a follower reading after seq N can
 * never later find a smaller seq committed behind it. SQLite has a single writer, which does the same.
 */
export async function recordEvents(w: WriteContext, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (w.recorded) w.recorded.events += events.length;
  if (w.stage) {
    w.stage.count += events.length;
    w.stage.buffer.push(...events);
    if (w.stage.buffer.length >= BATCH) await moveToStage(w, w.stage);
    return;
  }
  if (w.dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${EVENT_LOCK})`.execute(w.trx);
  }
  for (let i = 0; i < events.length; i += BATCH) {
    await w.trx.insertInto('events').values(events.slice(i, i + BATCH).map((e) => rowOf(w, e))).execute();
  }
  if (w.dialect === 'postgres') await notify(w);
}

const BATCH = 500;

const rowOf = (w: WriteContext, e: NewEvent) => ({ type: e.type, resource: e.resource, resource_id: e.resourceId, occurred_at: w.now, data: JSON.stringify(e.data) });

// The payload names the schema, so that stores sharing one database (tests do) wake only their own listeners.
const notify = (w: WriteContext) => sql`select pg_notify('store_events', current_schema())`.execute(w.trx);

/** Empties the buffer of a bulk write: into the staging table (PostgreSQL), or straight into the log (SQLite). */
async function moveToStage(w: WriteContext, stage: EventStage): Promise<void> {
  if (stage.buffer.length === 0) return;
  const rows = stage.buffer.splice(0).map((e) => rowOf(w, e));
  if (w.dialect !== 'postgres') {
    await w.trx.insertInto('events').values(rows).execute();
    return;
  }
  // The staging table is not in the typed schema: a temporary table of this transaction only.
  const values = rows.map((r) => sql`(${r.type}, ${r.resource}, ${r.resource_id}, ${r.occurred_at}, ${r.data})`);
  await sql`insert into pg_temp.staged_events (type, resource, resource_id, occurred_at, data) values ${sql.join(values)}`.execute(w.trx);
}

/**
 * A bulk write (an import of many records in one transaction) records its events through this context.
 * On PostgreSQL the event-order lock must not be held for the whole of such a write: every other writer
 * would queue behind it on the lock, holding its pool connection, until the pool ran dry and reads waited
 * too. So the events go to a temporary table of the transaction as they come, and publishStagedEvents moves
 * them into the log at the very end, under the lock, in one statement, right before the commit. Commit order
 * is still `seq` order, and the events still commit or vanish with the rows. SQLite has one writer, which the
 * bulk write holds from its first statement anyway: its events go straight into the log, 500 at a time.
 */
export async function stageEvents(w: WriteContext): Promise<WriteContext> {
  if (w.dialect === 'postgres') {
    await sql`create temporary table staged_events (ord bigint generated always as identity, type text not null, resource text not null, resource_id bigint not null, occurred_at text not null, data text not null) on commit drop`.execute(w.trx);
  }
  return { ...w, stage: { count: 0, buffer: [] } };
}

/** Records the staged events in the log (see stageEvents), in the order they were made; how many there were. */
export async function publishStagedEvents(w: WriteContext): Promise<number> {
  const stage = w.stage;
  if (!stage) throw new Error('publishStagedEvents needs a context from stageEvents');
  if (w.dialect !== 'postgres') await moveToStage(w, stage);
  else if (stage.count > 0) {
    await moveToStage(w, stage);
    await sql`select pg_advisory_xact_lock(${EVENT_LOCK})`.execute(w.trx);
    await sql`insert into events (type, resource, resource_id, occurred_at, data) select type, resource, resource_id, occurred_at, data from pg_temp.staged_events order by ord`.execute(w.trx);
    await notify(w);
  }
  return stage.count;
}

export async function headSeq(db: Executor): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
  return Number(row?.seq ?? 0);
}
