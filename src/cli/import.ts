import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { formatIssue, ImportFailed, importFile } from '../import/import.ts';
import { ImportUsageError } from '../import/source.ts';
import { appRegistry } from '../modules/registry.ts';
import { fail, printResult } from './output.ts';
import { progress } from './progress.ts';
import { withStore, type GlobalOptions } from './store.ts';
import { count } from './words.ts';

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('Import JSON Lines or CSV into one collection, all or nothing: records with a known id or natural key update, others create')
    .argument('<file>', 'a .jsonl/.ndjson or .csv file (or named pipe); the resource is read from its name (products.csv) unless --resource says')
    .option('--resource <name>', `one of ${[...appRegistry().byCollection.keys()].join(', ')}`)
    .option('--format <format>', 'jsonl or csv (default: from the extension)')
    .option('--delimiter <char>', 'CSV delimiter (default: ";" when the header has more of them than commas, else ",")')
    .option('--json', 'machine-readable output')
    .action(async (file: string, o: { resource?: string; format?: string; delimiter?: string; json?: boolean }) => {
      // A named pipe too: `mkfifo products.jsonl` and a producer streaming into it (its size is unknown).
      if (!existsSync(file) || !(statSync(file).isFile() || statSync(file).isFIFO())) fail(`cannot read ${file}: no such file`);
      await withStore(program.opts<GlobalOptions>(), async (store) => {
        // A progress display only where there is time to watch one.
        const bar = statSync(file).size >= 1 << 20 ? progress(`importing ${file} (KiB)`) : { update: () => {}, stop: () => {} };
        const started = Date.now();
        try {
          const result = await importFile(store, file, { ...o, onProgress: (done, total) => bar.update(Math.ceil(done / 1024), Math.ceil(total / 1024)) });
          bar.stop();
          const seconds = (Date.now() - started) / 1000;
          printResult(Boolean(o.json), { file, ...result, seconds }, () =>
            `Imported ${count(result.records, 'record')} into ${result.resource} from ${file}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged; ${count(result.events, 'event')} recorded in ${seconds.toFixed(1)} s.`);
        } catch (error) {
          bar.stop();
          if (error instanceof ImportUsageError) fail(error.message);
          if (!(error instanceof ImportFailed)) throw error;
          if (o.json) printResult(true, { file, imported: false, errors: error.issues, truncated: error.truncated }, () => '');
          else process.stderr.write(`${error.issues.map(formatIssue).join('\n')}${error.truncated ? '\n… stopped there; fix these and run again.' : ''}\n`);
          fail(error.message);
        }
      });
    });
}
