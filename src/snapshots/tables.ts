import type { Generated, Kysely, Transaction } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Database } from '../db/tables.ts';

/** A snapshot job as stored (migration 2026-11-23-002-snapshots). */
export interface SnapshotTable {
  id: Generated<number>;
  credential_id: number;
  collection: string;
  format: string;
  filters: string;
  fields: string | null;
  status: string;
  rows: Generated<number>;
  seq: number | null;
  size: number | null;
  sha256: string | null;
  error: string | null;
  attempts: Generated<number>;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  expires_at: string | null;
  claimed_by: string | null;
  lease_until: string | null;
}

/** One piece of a snapshot's file: piece `n` holds bytes from n × CHUNK_BYTES. */
export interface SnapshotChunkTable {
  snapshot_id: number;
  n: number;
  bytes: Buffer;
}

export type SnapshotDatabase = Database & { snapshots: SnapshotTable; snapshot_chunks: SnapshotChunkTable };
export type SnapshotExecutor = Kysely<SnapshotDatabase> | Transaction<SnapshotDatabase>;

// The snapshot tables are this feature's own: typed here rather than in the shared tables.ts.
export const snapshotTables = (db: Executor): SnapshotExecutor => db.withTables<{ snapshots: SnapshotTable; snapshot_chunks: SnapshotChunkTable }>() as unknown as SnapshotExecutor;
