import { Migrator, PostgresAdapter, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { DB } from './database.ts';
import * as core from './migrations/2026-11-21-001-core.ts';
import * as webhooks from './migrations/2026-11-21-002-webhooks.ts';
import * as sync from './migrations/2026-11-21-003-sync.ts';
import * as consoleTables from './migrations/2026-11-23-001-console.ts';
import * as snapshots from './migrations/2026-11-23-002-snapshots.ts';

/** Every migration, by name; names sort in the order they run. New migrations are appended here. */
export const migrations: Record<string, Migration> = {
  '2026-11-21-001-core': core,
  '2026-11-21-002-webhooks': webhooks,
  '2026-11-21-003-sync': sync,
  '2026-11-23-001-console': consoleTables,
  '2026-11-23-002-snapshots': snapshots,
};

/**
 * Runs the migrations not run yet. `extra`: migrations of resources declared outside src/ (a test's fixture
 * resource and its table), run after the store's own; their names must sort after them.
 */
export async function migrateToLatest(db: DB, options: { extra?: Record<string, Migration> } = {}): Promise<MigrationResultSet> {
  const all = { ...migrations, ...options.extra };
  // Kysely looks for its bookkeeping tables in every schema unless told which: on PostgreSQL, with another schema of
  // the same database being migrated at the same moment (parallel test suites), it would skip creating its own.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
    : undefined;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => all }, migrationTableSchema });
  const result = migrationTableSchema === undefined ? await exclusively(db, () => migrator.migrateToLatest()) : await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
  return result;
}

/**
 * Kysely takes no lock on SQLite (it assumes one process), so two processes opening a fresh file at once
 * (`serve` beside `seed`, two CLI commands) would both create the tables and one would fail. BEGIN IMMEDIATE
 * takes the file's write lock: the second waits (busy_timeout), then finds the work done. SQLite's DDL is
 * transactional, so a failed run also leaves nothing half-made.
 */
async function exclusively(db: DB, migrate: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  await sql`begin immediate`.execute(db);
  let result: MigrationResultSet;
  try {
    result = await migrate();
  } catch (error) {
    await sql`rollback`.execute(db);
    throw error;
  }
  await sql.raw(result.error ? 'rollback' : 'commit').execute(db);
  return result;
}
