import { Migrator, type Migration, type MigrationResultSet } from 'kysely';
import type { DB } from './database.ts';
import * as core from './migrations/2026-11-21-001-core.ts';

/** Every migration, by name; names sort in the order they run. New migrations are appended here. */
export const migrations: Record<string, Migration> = {
  '2026-11-21-001-core': core,
};

export async function migrateToLatest(db: DB): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
  return result;
}
