import type { Executor, Store } from '../db/database.ts';
import { snapshotTables, type SnapshotTable } from './tables.ts';

export const SNAPSHOT_FORMATS = ['ndjson', 'csv', 'xlsx'] as const;
export type SnapshotFormat = (typeof SNAPSHOT_FORMATS)[number];
export const SNAPSHOT_STATUSES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

/** A job as the service works with it (never a row type outside this file). */
export interface SnapshotJob {
  id: number;
  credentialId: number;
  collection: string;
  format: SnapshotFormat;
  filters: Record<string, string>;
  fields: string[] | null;
  status: SnapshotStatus;
  rows: number;
  seq: number | null;
  size: number | null;
  sha256: string | null;
  error: string | null;
  attempts: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  expiresAt: string | null;
  claimedBy: string | null;
  leaseUntil: string | null;
}

type Row = Omit<SnapshotTable, 'id' | 'rows' | 'attempts'> & { id: number; rows: number; attempts: number };

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toJob(r: Row): SnapshotJob {
  return {
    id: Number(r.id), credentialId: Number(r.credential_id), collection: r.collection, format: r.format as SnapshotFormat,
    filters: JSON.parse(r.filters) as Record<string, string>, fields: r.fields === null ? null : (JSON.parse(r.fields) as string[]),
    status: r.status as SnapshotStatus, rows: Number(r.rows), seq: num(r.seq), size: num(r.size), sha256: r.sha256, error: r.error,
    attempts: Number(r.attempts), createdAt: r.created_at, startedAt: r.started_at, finishedAt: r.finished_at, expiresAt: r.expires_at,
    claimedBy: r.claimed_by, leaseUntil: r.lease_until,
  };
}

export interface NewJob {
  credentialId: number;
  collection: string;
  format: SnapshotFormat;
  filters: Record<string, string>;
  fields: string[] | null;
}

/** Jobs of a credential that still take a place (queued or running): what SNAPSHOTS_PER_CREDENTIAL caps. */
export async function activeJobs(db: Executor, credentialId: number): Promise<number> {
  const row = await snapshotTables(db).selectFrom('snapshots').select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('credential_id', '=', credentialId).where('status', 'in', ['queued', 'running']).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertJob(db: Executor, job: NewJob, now: string): Promise<SnapshotJob> {
  const row = await snapshotTables(db).insertInto('snapshots').values({
    credential_id: job.credentialId, collection: job.collection, format: job.format, filters: JSON.stringify(job.filters),
    fields: job.fields ? JSON.stringify(job.fields) : null, status: 'queued', created_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return toJob(row as Row);
}

export async function findJob(db: Executor, id: number): Promise<SnapshotJob | undefined> {
  const row = await snapshotTables(db).selectFrom('snapshots').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toJob(row as Row) : undefined;
}

/** A credential's jobs, newest first, `limit` after the id `before` (keyset). */
export async function listJobs(db: Executor, credentialId: number, limit: number, before?: number): Promise<SnapshotJob[]> {
  let q = snapshotTables(db).selectFrom('snapshots').selectAll().where('credential_id', '=', credentialId).orderBy('id', 'desc').limit(limit);
  if (before !== undefined) q = q.where('id', '<', before);
  return ((await q.execute()) as Row[]).map(toJob);
}

/** Deletes a job and (by cascade) its file; a runner still writing it finds its claim gone and stops. */
export async function deleteJob(db: Executor, id: number): Promise<boolean> {
  await snapshotTables(db).deleteFrom('snapshot_chunks').where('snapshot_id', '=', id).execute();
  const result = await snapshotTables(db).deleteFrom('snapshots').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Takes the oldest queued job for `node`, leased until `leaseUntil`, or none. One statement that changes the
 * row only while it is still queued: two nodes asking at once cannot both get it (PostgreSQL re-reads the
 * row after the other's commit and finds it running; SQLite has one writer). On PostgreSQL `SKIP LOCKED`
 * lets the second node take the next job instead of waiting for the first one's.
 */
export async function claimNext(store: Store, node: string, now: string, leaseUntil: string): Promise<SnapshotJob | undefined> {
  const t = snapshotTables(store.db);
  let pick = t.selectFrom('snapshots').select('id').where('status', '=', 'queued').orderBy('id').limit(1);
  if (store.dialect === 'postgres') pick = pick.forUpdate().skipLocked();
  const row = await t.updateTable('snapshots')
    .set((eb) => ({ status: 'running', claimed_by: node, lease_until: leaseUntil, started_at: now, attempts: eb('attempts', '+', 1), rows: 0 }))
    .where('id', '=', (eb) => eb.selectFrom(pick.as('next')).select('next.id'))
    .where('status', '=', 'queued')
    .returningAll().executeTakeFirst();
  return row ? toJob(row as Row) : undefined;
}

/** Renews `node`'s claim on a running job and notes its progress; false when the claim is gone (deleted, or taken back after a lapse). */
export async function renewLease(db: Executor, id: number, node: string, leaseUntil: string, rows: number): Promise<boolean> {
  const result = await snapshotTables(db).updateTable('snapshots').set({ lease_until: leaseUntil, rows })
    .where('id', '=', id).where('claimed_by', '=', node).where('status', '=', 'running').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface Completion {
  rows: number;
  size: number;
  sha256: string;
  seq: number;
  finishedAt: string;
  expiresAt: string;
}

/** Marks `node`'s running job completed; false when its claim is gone (then the file it wrote is not the job's). */
export async function completeJob(db: Executor, id: number, node: string, c: Completion): Promise<SnapshotJob | undefined> {
  const row = await snapshotTables(db).updateTable('snapshots')
    .set({ status: 'completed', rows: c.rows, size: c.size, sha256: c.sha256, seq: c.seq, finished_at: c.finishedAt, expires_at: c.expiresAt, claimed_by: null, lease_until: null, error: null })
    .where('id', '=', id).where('claimed_by', '=', node).where('status', '=', 'running')
    .returningAll().executeTakeFirst();
  return row ? toJob(row as Row) : undefined;
}

/** Marks a job failed (`node`'s running one, or any job when `node` is undefined); its partial file goes. */
export async function failJob(db: Executor, id: number, node: string | undefined, error: string, now: string): Promise<SnapshotJob | undefined> {
  let q = snapshotTables(db).updateTable('snapshots')
    .set({ status: 'failed', error: error.slice(0, 1000), finished_at: now, claimed_by: null, lease_until: null })
    .where('id', '=', id).where('status', '=', 'running');
  if (node !== undefined) q = q.where('claimed_by', '=', node);
  const row = await q.returningAll().executeTakeFirst();
  if (row) await snapshotTables(db).deleteFrom('snapshot_chunks').where('snapshot_id', '=', id).execute();
  return row ? toJob(row as Row) : undefined;
}

/** Running jobs whose node stopped renewing its claim (it died, or lost its database). */
export async function lapsedJobs(db: Executor, now: string): Promise<SnapshotJob[]> {
  const rows = await snapshotTables(db).selectFrom('snapshots').selectAll().where('status', '=', 'running').where('lease_until', '<', now).execute();
  return (rows as Row[]).map(toJob);
}

/** Puts a lapsed job back in the queue (only if it is still lapsed: its node may have renewed meanwhile); its partial file goes. */
export async function requeue(db: Executor, id: number, now: string): Promise<boolean> {
  const result = await snapshotTables(db).updateTable('snapshots').set({ status: 'queued', claimed_by: null, lease_until: null, rows: 0 })
    .where('id', '=', id).where('status', '=', 'running').where('lease_until', '<', now).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await snapshotTables(db).deleteFrom('snapshot_chunks').where('snapshot_id', '=', id).execute();
  return true;
}

/** Completed jobs past their expiry lose their file and become `expired`; how many. */
export async function expireJobs(db: Executor, now: string): Promise<number> {
  const t = snapshotTables(db);
  const due = await t.selectFrom('snapshots').select('id').where('status', '=', 'completed').where('expires_at', '<', now).limit(100).execute();
  for (const { id } of due) {
    await t.deleteFrom('snapshot_chunks').where('snapshot_id', '=', Number(id)).execute();
    await t.updateTable('snapshots').set({ status: 'expired' }).where('id', '=', Number(id)).where('status', '=', 'completed').execute();
  }
  return due.length;
}

/** Job rows finished before `before` (expired or failed long ago) are forgotten. */
export async function forgetJobs(db: Executor, before: string): Promise<void> {
  await snapshotTables(db).deleteFrom('snapshots').where('status', 'in', ['expired', 'failed']).where('finished_at', '<', before).execute();
}
