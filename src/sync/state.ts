import type { Generated, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Executor } from '../db/database.ts';

/** The follower's one row (migration 2026-11-21-003-sync). */
export interface SyncStateTable {
  id: number;
  source_url: string;
  phase: string;
  cursor_seq: Generated<number>;
  snapshot_head: number | null;
  head_seq: number | null;
  applied_events: Generated<number>;
  applied_changes: Generated<number>;
  snapshots: Generated<number>;
  snapshot_started_at: string | null;
  snapshot_finished_at: string | null;
  last_applied_at: string | null;
  last_event_at: string | null;
  lag_ms: number | null;
  last_contact_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  created_at: string;
  updated_at: string;
}

type SyncDatabase = Database & { sync_state: SyncStateTable };
type SyncExecutor = Kysely<SyncDatabase> | Transaction<SyncDatabase>;

export type Phase = 'snapshot' | 'following';

export interface SyncState {
  sourceUrl: string;
  phase: Phase;
  cursorSeq: number;
  snapshotHead: number | null;
  headSeq: number | null;
  appliedEvents: number;
  appliedChanges: number;
  snapshots: number;
  snapshotStartedAt: string | null;
  snapshotFinishedAt: string | null;
  lastAppliedAt: string | null;
  lastEventAt: string | null;
  lagMs: number | null;
  lastContactAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
}

const ROW_ID = 1;

// The sync table is this feature's own: typed here rather than in the shared tables.ts.
const table = (db: Executor): SyncExecutor => db.withTables<{ sync_state: SyncStateTable }>() as unknown as SyncExecutor;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function fromRow(r: Selectable<SyncStateTable>): SyncState {
  return {
    sourceUrl: r.source_url,
    phase: r.phase === 'following' ? 'following' : 'snapshot',
    cursorSeq: Number(r.cursor_seq),
    snapshotHead: num(r.snapshot_head),
    headSeq: num(r.head_seq),
    appliedEvents: Number(r.applied_events),
    appliedChanges: Number(r.applied_changes),
    snapshots: Number(r.snapshots),
    snapshotStartedAt: r.snapshot_started_at,
    snapshotFinishedAt: r.snapshot_finished_at,
    lastAppliedAt: r.last_applied_at,
    lastEventAt: r.last_event_at,
    lagMs: num(r.lag_ms),
    lastContactAt: r.last_contact_at,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
  };
}

export async function readState(db: Executor): Promise<SyncState | undefined> {
  const row = await table(db).selectFrom('sync_state').selectAll().where('id', '=', ROW_ID).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Starts (or restarts) a snapshot of `sourceUrl` from `head`; keeps the counters of an earlier run of the same source. */
export async function beginSnapshot(db: Executor, sourceUrl: string, head: number, now: string): Promise<void> {
  const t = table(db);
  const existing = await readState(db);
  const keep = existing?.sourceUrl === sourceUrl;
  const values = {
    source_url: sourceUrl, phase: 'snapshot', snapshot_head: head, head_seq: head, snapshot_started_at: now, snapshot_finished_at: null,
    cursor_seq: keep ? existing.cursorSeq : 0, last_contact_at: now, updated_at: now,
  };
  if (existing) await t.updateTable('sync_state').set(values).where('id', '=', ROW_ID).execute();
  else await t.insertInto('sync_state').values({ id: ROW_ID, ...values, created_at: now }).execute();
}

/** Ends a snapshot: from now on the feed is followed from the head read before the snapshot began. */
export async function finishSnapshot(db: Executor, head: number, changes: number, now: string): Promise<void> {
  await table(db).updateTable('sync_state')
    .set((eb) => ({
      phase: 'following', cursor_seq: head, snapshot_finished_at: now, snapshots: eb('snapshots', '+', 1),
      applied_changes: eb('applied_changes', '+', changes), last_contact_at: now, updated_at: now, last_error: null,
    }))
    .where('id', '=', ROW_ID).execute();
}

export interface BatchProgress {
  cursor: number;
  events: number;
  changes: number;
  lastEventAt: string | null;
  lagMs: number | null;
  now: string;
}

/** Moves the cursor past an applied batch; called inside the batch's own transaction. */
export async function advanceCursor(db: Executor, p: BatchProgress): Promise<void> {
  await table(db).updateTable('sync_state')
    .set((eb) => ({
      cursor_seq: p.cursor, applied_events: eb('applied_events', '+', p.events), applied_changes: eb('applied_changes', '+', p.changes),
      last_applied_at: p.now, last_contact_at: p.now, updated_at: p.now, last_error: null,
      ...(p.lastEventAt ? { last_event_at: p.lastEventAt } : {}),
      ...(p.lagMs !== null ? { lag_ms: p.lagMs } : {}),
    }))
    .where('id', '=', ROW_ID).where('cursor_seq', '<=', p.cursor).execute();
}

/** Records that the main store answered (a long-poll with nothing new), and what its head is if known. */
export async function noteContact(db: Executor, now: string, headSeq?: number): Promise<void> {
  await table(db).updateTable('sync_state')
    .set({ last_contact_at: now, updated_at: now, last_error: null, ...(headSeq !== undefined ? { head_seq: headSeq } : {}) })
    .where('id', '=', ROW_ID).execute();
}

export async function noteHead(db: Executor, headSeq: number): Promise<void> {
  await table(db).updateTable('sync_state').set({ head_seq: headSeq }).where('id', '=', ROW_ID).execute();
}

export async function noteError(db: Executor, message: string, now: string): Promise<void> {
  await table(db).updateTable('sync_state').set({ last_error: message.slice(0, 1000), last_error_at: now, updated_at: now }).where('id', '=', ROW_ID).execute();
}

/** Whether this store follows a main store (a sync has started here at least once). */
export async function followsMain(db: Executor): Promise<boolean> {
  return (await readState(db)) !== undefined;
}

/** Stops following: local edits become possible again (`store-api sync forget`). */
export async function forgetState(db: Executor): Promise<boolean> {
  const result = await table(db).deleteFrom('sync_state').where('id', '=', ROW_ID).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
