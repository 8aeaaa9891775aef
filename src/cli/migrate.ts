import type { Command } from 'commander';
import { printResult } from './output.ts';
import { withStore, type GlobalOptions } from './store.ts';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const global = program.opts<GlobalOptions>();
      await withStore(global, async (store) => {
        const { migrateToLatest } = await import('../db/migrate.ts');
        const result = await migrateToLatest(store.db);
        const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        printResult(Boolean(options.json), { applied, dialect: store.dialect }, () => (applied.length ? `Applied ${applied.join(', ')}` : 'Schema is up to date.'));
      });
    });
}
