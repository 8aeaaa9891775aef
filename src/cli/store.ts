import { loadConfig, type Config } from '../config.ts';
import { openStore, type Store } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';

export interface GlobalOptions {
  database?: string;
}

/** Opens the configured database, migrated, for a command; closes it when the work is done. */
export async function withStore<T>(options: GlobalOptions, work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig({ DATABASE_URL: options.database });
  const store = openStore(config.databaseUrl, { writeWaitMs: config.databaseWriteWaitMs });
  try {
    await migrateToLatest(store.db);
    return await work(store, config);
  } finally {
    await store.close();
  }
}
