import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { openStore } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { printResult } from './output.ts';
import type { GlobalOptions } from './store.ts';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      // Not through withStore: it migrates on opening, and this command must report what it applied.
      const config = loadConfig({ DATABASE_URL: program.opts<GlobalOptions>().database });
      const store = openStore(config.databaseUrl, { writeWaitMs: config.databaseWriteWaitMs });
      try {
        const result = await migrateToLatest(store.db);
        const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        printResult(Boolean(options.json), { applied, dialect: store.dialect }, () => (applied.length ? `Applied ${applied.join(', ')}` : 'Schema is up to date.'));
      } finally {
        await store.close();
      }
    });
}
