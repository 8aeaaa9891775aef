import { relative, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { createCredential, hashingKey } from '../auth/credentials.service.ts';
import { ALL_SCOPES } from '../auth/scopes.ts';
import { loadConfig } from '../config.ts';
import { openStore, type Store } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { seedStore } from '../seed/seed.ts';
import type { GlobalOptions } from './store.ts';
import { progress } from './progress.ts';

interface ServeOptions {
  host?: string;
  port?: string;
  publicUrl?: string;
  demo?: boolean;
  demoProducts: string;
}

async function isEmpty(store: Store): Promise<boolean> {
  const product = await store.db.selectFrom('products').select('id').limit(1).executeTakeFirst();
  const credential = await store.db.selectFrom('credentials').select('id').limit(1).executeTakeFirst();
  return !product && !credential;
}

/** Seeds a demo store and credential into an empty database; returns the lines that tell how to use them. */
async function prepareDemo(store: Store, products: number): Promise<{ clientId: string; clientSecret: string } | undefined> {
  if (!(await isEmpty(store))) return undefined;
  const bar = progress('seeding demo store');
  await seedStore(store, { products, orders: Math.ceil(products / 3), seed: 1, onProgress: (d, t) => bar.update(d, t) });
  bar.stop();
  const read = ALL_SCOPES.filter((s) => s !== 'ai:generate');
  return createCredential(store.db, await hashingKey(store.db), 'Demo credential', [...read, 'ai:generate']);
}

/**
 * The database as a person reads it, and the `--database` option that makes another command use it: a SQLite
 * file by its path (relative to here when it is below), a PostgreSQL one by its URL without the password (which
 * stays in DATABASE_URL or .env, where this start found it; the option is given only when the start had one).
 */
export function databaseForCommand(url: string, given: string | undefined): { name: string; option: string } {
  if (url.startsWith('sqlite:')) {
    const file = resolve(url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''));
    const shown = relative(process.cwd(), file).startsWith('..') ? file : relative(process.cwd(), file);
    return { name: shown, option: ` --database ${quoteForShell(`sqlite:${shown}`)}` };
  }
  const safe = new URL(url);
  if (safe.password) safe.password = '****';
  return { name: safe.toString(), option: given && !new URL(given).password ? ` --database ${quoteForShell(given)}` : '' };
}

/** A word for sh, bash and zsh: as it is when it is plain, else single-quoted. */
const quoteForShell = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Migrate the database, then serve the API')
    .option('--host <host>', 'HOST to listen on')
    .option('--port <port>', 'PORT to listen on')
    .option('--public-url <url>', 'PUBLIC_URL used in links')
    .option('--demo', 'seed a demo store and credential when the database is empty')
    .option('--demo-products <n>', 'products in the demo store', '1000')
    .action(async (o: ServeOptions) => {
      const global = program.opts<GlobalOptions>();
      const config = loadConfig({ DATABASE_URL: global.database, HOST: o.host, PORT: o.port, PUBLIC_URL: o.publicUrl });
      // V8 lets the old generation grow to up to four times the live heap before a full collection. Under load a
      // server promotes each in-flight answer (50 connections' answers outlive two scavenges), so it sat at 4 x a
      // 34 MB live heap of dead answers; 1.5 x keeps it near 145 MB instead of 217 MB (PostgreSQL, 50
      // connections), for a full collection every few seconds, whose marking runs beside the requests.
      if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${Math.round(config.heapGrowthPercent)}`);
      const store = openStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs, writeWaitMs: config.databaseWriteWaitMs });
      await migrateToLatest(store.db);
      const demo = o.demo ? await prepareDemo(store, Number(o.demoProducts) || 1000) : undefined;
      // Loaded here, not at the top: the HTTP stack is most of the CLI's start-up time, and only serve needs it.
      const { startServer } = await import('../server.ts');
      const server = await startServer(config, { store });
      // With --port 0 the system picks the port; links and the printed curl line must name the real one.
      if (config.port === 0 && !o.publicUrl && !process.env.PUBLIC_URL) config.publicUrl = server.url;
      const say = (line = '') => process.stdout.write(`${line}\n`);
      say();
      say(`Store Data API listening on ${server.url} (${store.dialect}); reference: ${config.publicUrl}/docs`);
      say(`Console (credentials, webhooks, usage, sync): ${config.publicUrl}/admin, sign in with the admin token`);
      if (server.ctx.admin.generated) {
        say(`Admin token (for the console and /admin/api; shown once, set ADMIN_TOKEN to choose your own): ${server.ctx.admin.generated}`);
      }
      if (demo) {
        const base = config.publicUrl;
        say();
        say('Demo store ready. Credential (the secret is shown only now):');
        say(`  client id:     ${demo.clientId}`);
        say(`  client secret: ${demo.clientSecret}`);
        say();
        say('Try it:');
        say(`  curl -s "${base}/api/v2/products?limit=2" -H "Authorization: Bearer $(curl -s -X POST ${base}/oauth/token -d grant_type=client_credentials -d client_id=${demo.clientId} -d client_secret=${demo.clientSecret} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')"`);
      } else if (o.demo) {
        // A demo credential's secret is shown once, on the first start; later starts say how to make another, for this database.
        const { name, option } = databaseForCommand(config.databaseUrl, global.database);
        say(`The database ${name} already has data, so no demo credential was made (secrets are shown only when created). Create one with:`);
        say(`  npx store-api${option} credentials create --name me --scopes all${option ? '' : '   (with the same DATABASE_URL)'}`);
      }
      say();
      const shutdown = (signal: string) => {
        server.app.log.info({ signal }, 'shutting down');
        const force = setTimeout(() => process.exit(1), 15_000);
        force.unref();
        void server.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.once('SIGTERM', () => shutdown('SIGTERM'));
    });
}
