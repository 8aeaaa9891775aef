import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { AppError } from '../errors/app-error.ts';
import { registerCredentials } from './credentials.ts';
import { registerImport } from './import.ts';
import { registerMigrate } from './migrate.ts';
import { CliError } from './output.ts';
import { registerSeed } from './seed.ts';
import { registerServe } from './serve.ts';
import { registerSnapshots } from './snapshots.ts';
import { packageVersion } from './words.ts';
import { extraCommands } from './extra-commands.ts';

const program = new Command('store-api')
  .description('Store Data API: serve, migrate, seed, import, manage credentials and webhooks, follow a main store.')
  .version(packageVersion(), '-V, --version', 'print the version of store-api')
  .option('--database <url>', 'DATABASE_URL: sqlite:<path> or postgres://…')
  // Usage errors are one line on stderr like every other failure (API.md §11), with the way to help.
  .configureOutput({ outputError: (message, write) => write(`store-api: ${message.replace(/^error: /, '').trim()} (see store-api --help)\n`) })
  .exitOverride();

registerServe(program);
registerMigrate(program);
registerSeed(program);
registerImport(program);
registerCredentials(program);
registerSnapshots(program);
for (const register of extraCommands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  const known = error instanceof CliError || error instanceof ConfigError || error instanceof AppError;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`store-api: ${known ? message : `unexpected error: ${message}`}\n`);
  process.exit(1);
}
