import { Migrator, PostgresAdapter, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { DB } from './database.ts';
import * as core from './migrations/2026-11-21-001-core.ts';
import * as sync from './migrations/2026-11-21-003-sync.ts';

/** Every migration, by name; names sort in the order they run. New migrations are appended here. */
export const migrations: Record<string, Migration> = {
  '2026-11-21-001-core': core,
  '2026-11-21-003-sync': sync,
};

export async function migrateToLatest(db: DB): Promise<MigrationResultSet> {
  // Kysely looks for its bookkeeping tables in every schema unless told which: on PostgreSQL, with another schema of
  // the same database being migrated at the same moment (parallel test suites), it would skip creating its own.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
    : undefined;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
  return result;
}
