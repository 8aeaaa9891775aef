import { Migrator, PostgresAdapter, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
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
 * How long a migration's statement waits on PostgreSQL for a lock another session holds, and how many times the
 * migrations are tried. An `ALTER TABLE` waits for every transaction that has read the table, an export streaming
 * it for minutes among them, and while it waits every later query of that table queues behind it: the whole API
 * would stall behind one export. With a lock timeout the migrations give up instead, nothing changed (they run in
 * one transaction), and are tried again a little later; the node then starts, or says why it did not.
 */
export const MIGRATION_LOCK = { timeoutMs: 10_000, attempts: 3, pauseMs: 2_000 };

/** PostgreSQL's `lock_not_available`: a lock timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Runs the migrations not run yet. `extra`: migrations of resources declared outside src/ (a test's fixture
 * resource and its table), run after the store's own; their names must sort after them. `lock`: MIGRATION_LOCK's
 * settings, for tests.
 */
export async function migrateToLatest(db: DB, options: { extra?: Record<string, Migration>; lock?: typeof MIGRATION_LOCK } = {}): Promise<MigrationResultSet> {
  const all = { ...migrations, ...options.extra };
  const lock = options.lock ?? MIGRATION_LOCK;
  // Kysely looks for its bookkeeping tables in every schema unless told which: on PostgreSQL, with another schema of
  // the same database being migrated at the same moment (parallel test suites), it would skip creating its own.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
    : undefined;
  if (migrationTableSchema === undefined) {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => all }, migrationTableSchema });
    return settled(await exclusively(db, () => migrator.migrateToLatest()));
  }
  const migrator = new Migrator({ db, provider: { getMigrations: async () => withLockTimeout(all, lock.timeoutMs) }, migrationTableSchema });
  for (let attempt = 1; ; attempt++) {
    const result = await migrator.migrateToLatest();
    if ((result.error as { code?: unknown } | undefined)?.code !== LOCK_NOT_AVAILABLE) return settled(result);
    if (attempt >= lock.attempts) {
      const name = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'a migration';
      throw new Error(
        `migration ${name} waited ${lock.timeoutMs / 1000} s for a table another session holds (an export still running, or an open transaction), ${lock.attempts} times; nothing was changed. Run it again once that session has finished.`,
        { cause: result.error },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, lock.pauseMs));
  }
}

function settled(result: MigrationResultSet): MigrationResultSet {
  if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
  return result;
}

/** Each migration first bounds its transaction's waits for locks (PostgreSQL; see MIGRATION_LOCK). */
function withLockTimeout(all: Record<string, Migration>, timeoutMs: number): Record<string, Migration> {
  const bounded = async (db: Kysely<unknown>) => void (await sql.raw(`set local lock_timeout = ${Math.round(timeoutMs)}`).execute(db));
  const guard = (m: Migration): Migration => ({
    ...m,
    up: async (db) => {
      await bounded(db);
      await m.up(db);
    },
  });
  return Object.fromEntries(Object.entries(all).map(([name, m]) => [name, guard(m)]));
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
