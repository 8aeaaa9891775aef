// `npm run bench:sync [-- --options]`: a follower's initial sync of a main store of 100 000 products (with
// their parameter and filter values), timed, with the follower process's peak memory; then the steady-state
// lag from a write on the main store to its row on the follower (p50/p99). Main store on SQLite; followers on
// SQLite and PostgreSQL. See docs/benchmarks.md, "Sync". Options: --products 100000 --samples 200
// --followers sqlite,postgres --fresh (seed the main store again) --dir <cache dir for the seeded main store>.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { numberOption, parseArgs } from './lib/args.ts';
import { freePort } from './lib/ports.ts';
import { createBenchDatabase, dropBenchDatabase } from './lib/postgres.ts';
import { runMeasured, startServer, watchPeakRss, type Server } from './lib/processes.ts';
import { round, table } from './lib/report.ts';

const CLI = join(import.meta.dirname, '..', 'bin', 'store-api.js');
const ADMIN = 'bench-sync-admin-0123456789abcdefghijk';
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { options } = parseArgs(process.argv.slice(2));
const products = numberOption(options, 'products', 100_000);
const samples = numberOption(options, 'samples', 200);
const followers = (options.get('followers') ?? 'sqlite,postgres').split(',');
const dir = options.get('dir') ?? join(tmpdir(), 'store-api-bench-sync');
mkdirSync(dir, { recursive: true });

async function cli(args: string[], env: Record<string, string> = {}): Promise<string> {
  return (await runMeasured(process.execPath, [CLI, ...args], env)).stdout;
}

/** The seeded main store, kept between runs (seeding 100 000 products takes a minute). */
async function mainStore(): Promise<string> {
  const file = join(dir, `main-${products}.db`);
  if (existsSync(file) && options.get('fresh') !== 'true') {
    const db = new SQLite(file, { readonly: true });
    const n = (db.prepare('select count(*) as n from products').get() as { n: number }).n;
    db.close();
    if (n === products) {
      say(`reusing ${file} (${products} products)`);
      return file;
    }
  }
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  say(`seeding ${products} products into ${file} …`);
  const started = Date.now();
  await cli(['--database', `sqlite:${file}`, 'seed', '--products', String(products), '--orders', '0', '--json']);
  say(`  seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return file;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Runs `store-api sync` to the end: wall time, peak RSS and CPU time of the follower process. */
function measuredSync(args: string[], env: Record<string, string>): Promise<{ stdout: string; seconds: number; peakRssMb: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const rss = watchPeakRss(child.pid!);
    let cpu = 0;
    const timer = setInterval(() => {
      const now = cpuSeconds(child.pid!);
      if (!Number.isNaN(now)) cpu = now;
    }, 100);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('exit', (code) => {
      clearInterval(timer);
      rss.stop();
      if (code !== 0) return reject(new Error(`sync exited with ${code}: ${stderr}`));
      resolve({ stdout, seconds: (performance.now() - started) / 1000, peakRssMb: rss.peakMb(), cpu });
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface FollowerDb {
  url: string;
  /** The name of product `id` as the follower's database has it now. */
  nameOf(id: number): Promise<string | undefined>;
  counts(): Promise<Record<string, number>>;
  drop(): Promise<void>;
}

async function followerDb(kind: string): Promise<FollowerDb> {
  const tables = ['brands', 'categories', 'products', 'product_parameters', 'product_filters', 'parameters', 'filters', 'filter_values', 'events'];
  if (kind === 'sqlite') {
    const file = join(dir, `follower-${process.pid}.db`);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    let reader: SQLite.Database | undefined;
    const open = () => (reader ??= new SQLite(file, { readonly: true }));
    return {
      url: `sqlite:${file}`,
      nameOf: async (id) => (open().prepare('select name from products where id = ?').get(id) as { name: string } | undefined)?.name,
      counts: async () => Object.fromEntries(tables.map((t) => [t, (open().prepare(`select count(*) as n from ${t}`).get() as { n: number }).n])),
      drop: async () => {
        reader?.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  const created = await createBenchDatabase();
  const pool = new pg.Pool({ connectionString: created.url, max: 1 });
  return {
    url: created.url,
    nameOf: async (id) => (await pool.query<{ name: string }>('select name from products where id = $1', [id])).rows[0]?.name,
    counts: async () => Object.fromEntries(await Promise.all(tables.map(async (t) => [t, Number((await pool.query(`select count(*) as n from ${t}`)).rows[0].n)]))),
    drop: async () => {
      await pool.end();
      await dropBenchDatabase(created.name);
    },
  };
}

async function admin(main: Server, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${main.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

const mainFile = await mainStore();
const credential = JSON.parse(await cli(['--database', `sqlite:${mainFile}`, 'credentials', 'create', '--name', 'bench follower', '--scopes', 'changes:read,products:read,categories:read,brands:read,product-parameters:read,product-filters:read', '--json'])) as { clientId: string; clientSecret: string };
const port = await freePort();
// The benchmark measures the sync, not the main store's rate limit (20 requests/s by default would pace the copy's ~800 pages).
const main = await startServer('main store', process.execPath, [CLI, 'serve'], {
  DATABASE_URL: `sqlite:${mainFile}`, PORT: String(port), ADMIN_TOKEN: ADMIN, RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', LOG_LEVEL: 'warn',
}, `http://127.0.0.1:${port}/healthz`);
const syncEnv = { SYNC_CLIENT_ID: credential.clientId, SYNC_CLIENT_SECRET: credential.clientSecret, LOG_LEVEL: 'warn' };

const results: Array<Array<string | number>> = [];
try {
  for (const kind of followers) {
    const db = await followerDb(kind);
    try {
      say(`\n${kind} follower: initial sync of ${products} products from ${main.url} …`);
      const mainCpu = cpuSeconds(main.child.pid!);
      const initial = await measuredSync(['sync', '--from', main.url, '--json'], { ...syncEnv, DATABASE_URL: db.url });
      const mainUsed = cpuSeconds(main.child.pid!) - mainCpu;
      const outcome = JSON.parse(initial.stdout) as { snapshot: { items: number } };
      const counts = await db.counts();
      say(`  ${outcome.snapshot.items} items in ${initial.seconds.toFixed(1)} s, peak RSS ${initial.peakRssMb} MB; CPU: follower ${initial.cpu.toFixed(1)} s, main store ${mainUsed.toFixed(1)} s; ${JSON.stringify(counts)}`);

      // Steady state: a follower running (`sync --follow`), one write at a time on the main store, timed until its row changed on the follower.
      const follower = spawn(process.execPath, [CLI, 'sync', '--follow', '--from', main.url], { env: { ...process.env, ...syncEnv, DATABASE_URL: db.url }, stdio: 'ignore' });
      const lags: number[] = [];
      try {
        await sleep(3000);
        for (let i = 0; i < samples; i++) {
          const id = 1 + ((i * 7919) % products);
          const name = `Lag probe ${process.pid}-${i}`;
          const started = performance.now();
          await admin(main, 'PATCH', `/products/${id}`, { name });
          while ((await db.nameOf(id)) !== name) {
            if (performance.now() - started > 30_000) throw new Error(`write ${i} did not reach the follower in 30 s`);
            await sleep(1);
          }
          lags.push(performance.now() - started);
          await sleep(20 + Math.random() * 80);
        }
      } finally {
        follower.kill('SIGTERM');
      }
      lags.sort((a, b) => a - b);
      const [p50, p99] = [percentile(lags, 50), percentile(lags, 99)];
      say(`  lag over ${samples} writes: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${lags[lags.length - 1].toFixed(1)} ms`);
      results.push([kind, outcome.snapshot.items, round(initial.seconds, 1), round(initial.cpu, 1), round(mainUsed, 1), initial.peakRssMb, round(p50, 1), round(p99, 1)]);
    } finally {
      await db.drop();
    }
  }
} finally {
  await main.stop();
}

say('');
say(`Main store: SQLite, ${products} products (with parameter and filter values), served by \`store-api serve\` on this machine.`);
say(`Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} (${cpus().length} cores; other work on the machine slows the wall times, not the CPU times).`);
say(table(['follower', 'items copied', 'initial sync s', 'follower CPU s', 'main store CPU s', 'follower peak RSS MB', 'lag p50 ms', 'lag p99 ms'], results));
