// `npm run bench:snapshots [-- --options]`: a snapshot of every product-parameter value (NDJSON.gz and CSV.gz)
// timed beside the streamed CSV export of the same listing, the database's own CSV export (`sqlite3 -csv`,
// `psql \copy`) and its own JSON lines (NATIVE_NDJSON_*) in the same run, with this process's peak RSS over
// each; then a follower's initial sync through snapshots against paging on SQLite. Everything runs in this
// process except the database tools.
// Options: --rows 100000 (product-parameter values wanted; the issue's case is --rows 1011694), --sync-products
// 20000 (the issue's case 100000; 0 skips the sync part), --backends sqlite,postgres (none: only the sync part),
// --rounds 3 (each backend's five measurements are taken this many times in turn, and the medians reported: one
// measurement moves with the machine, and the same PostgreSQL snapshot took 2.1 s and 2.7 s in runs minutes apart),
// --out bench/results/snapshots-<date>T<hhmm>.md (the time keeps an earlier run of the day).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { numberOption, parseArgs } from './lib/args.ts';
import { createBenchDatabase, dropBenchDatabase } from './lib/postgres.ts';
import { median } from './lib/report.ts';
import { buildApp } from '../src/app.ts';
import { createCredential } from '../src/auth/credentials.service.ts';
import type { Scope } from '../src/auth/scopes.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { openStore, type Store } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { plan } from '../src/listing/engine.ts';
import { openExportConnection } from '../src/listing/formats/connection.ts';
import { streamExport } from '../src/listing/formats/stream.ts';
import { appRegistry } from '../src/modules/registry.ts';
import { seedStore } from '../src/seed/seed.ts';
import { insertJob } from '../src/snapshots/jobs.repository.ts';
import { produceSnapshot } from '../src/snapshots/produce.ts';
import { SnapshotRunner } from '../src/snapshots/runner.ts';
import { runSync } from '../src/sync/follower.ts';
import { REQUIRED_SCOPES } from '../src/sync/mirrors.ts';

const { options } = parseArgs(process.argv.slice(2));
const wantedRows = numberOption(options, 'rows', 100_000);
// 0 is a valid answer here (skip the sync part), which numberOption refuses.
const syncProducts = options.get('sync-products') === '0' ? 0 : numberOption(options, 'sync-products', 20_000);
const backends = (options.get('backends') ?? 'sqlite,postgres').split(',').filter((b) => b && b !== 'none');
const rounds = numberOption(options, 'rounds', 3);
const startedAt = new Date().toISOString();
const day = startedAt.slice(0, 10);
const out = options.get('out') ?? join(import.meta.dirname, 'results', `snapshots-${day}T${startedAt.slice(11, 16).replace(':', '')}.md`);
const say = (line: string) => process.stdout.write(`${line}\n`);
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const MB = 1024 * 1024;
const registry = appRegistry();
const params = registry.byCollection.get('product-parameters')!;

/** `cpu`: CPU seconds (user + system) of this process, or of the tool's, over the step: on a loaded machine the figure that compares. */
interface Result { backend: string; what: string; rows: number; seconds: number; cpu?: number; mb?: number; peakRssMb?: number; round?: number }
const results: Result[] = [];

/** Runs `work` while sampling this process's RSS; the seconds it took and the peak RSS above where it started. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; cpu: number; peakRssMb: number }> {
  global.gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const value = await work();
    const used = process.cpuUsage(cpu);
    return { value, seconds: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, peakRssMb: (Math.max(peak, process.memoryUsage.rss()) - base) / MB };
  } finally {
    clearInterval(timer);
  }
}

/** A command's wall time and CPU time (through /usr/bin/time) with its output thrown away, and the lines it wrote. */
function tool(command: string, args: string[]): Promise<{ seconds: number; cpu: number; lines: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-f', 'cpu %U %S', command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    let lines = 0;
    let bytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      bytes += d.length;
      // Counted with indexOf, as the streamed export's lines below: a `for … of` over every byte took 0.4 s of
      // this process for 92 MB of CSV (0.9 s for the JSON lines), on one of the two cores the tool and the
      // database share, and the tool waited on the full pipe meanwhile. Runs before 2026-11-27 17:50 UTC
      // overstate the tools' times, and understate the snapshots' ratios to them.
      for (let at = d.indexOf(10); at !== -1; at = d.indexOf(10, at + 1)) lines++;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const [, user, system] = /cpu ([\d.]+) ([\d.]+)/.exec(err) ?? [];
      if (code === 0 && user) resolve({ seconds: (performance.now() - started) / 1000, cpu: Number(user) + Number(system), lines, bytes });
      else reject(new Error(`${command} exited with ${code}: ${err}`));
    });
  });
}

/** The product-parameter listing's columns, as the database's own tools export them. */
const NATIVE_QUERY = 'select t.id, t.product_id, t.parameter_id, p.name, t.value, p.unit, t.created_at, t.updated_at from product_parameters t join parameters p on p.id = t.parameter_id order by t.id';
/**
 * The same rows as JSON lines written by the database itself, with the listing's field names: what a user of the
 * database alone would run for NDJSON. SQLite's `json_object` per row; PostgreSQL's `row_to_json` of the row
 * (compact JSON, as the API's; `json_build_object` writes spaces and measured slower). The NDJSON snapshot is
 * also read against this: building a JSON text per row costs the database itself more than its CSV does.
 */
const NATIVE_NDJSON_SQLITE = "select json_object('id', t.id, 'productId', t.product_id, 'parameterId', t.parameter_id, 'parameterName', p.name, 'value', t.value, 'unit', p.unit, 'createdAt', t.created_at, 'updatedAt', t.updated_at) from product_parameters t join parameters p on p.id = t.parameter_id order by t.id";
const NATIVE_NDJSON_PG = 'select row_to_json(x) from (select t.id, t.product_id as "productId", t.parameter_id as "parameterId", p.name as "parameterName", t.value, p.unit, t.created_at as "createdAt", t.updated_at as "updatedAt" from product_parameters t join parameters p on p.id = t.parameter_id order by t.id) x';

async function exportsOf(backend: string, store: Store, url: string, sqliteFile: string | undefined, round: number): Promise<void> {
  const hashKey = 'bench';
  for (const format of ['ndjson', 'csv'] as const) {
    const job = await insertJob(store.db, { credentialId: 0, collection: 'product-parameters', format, filters: {}, fields: null }, new Date().toISOString());
    const m = await measured(() => produceSnapshot(store, params, job, hashKey, new AbortController().signal, () => {}));
    results.push({ backend, what: `snapshot ${format}.gz (into chunks)`, rows: m.value.rows, seconds: m.seconds, cpu: m.cpu, mb: m.value.size / MB, peakRssMb: m.peakRssMb, round });
    say(`  ${backend} snapshot ${format}: ${m.value.rows} rows ${m.seconds.toFixed(1)} s, ${(m.value.size / MB).toFixed(1)} MB, peak RSS +${m.peakRssMb.toFixed(0)} MB`);
  }
  let bytes = 0;
  let lines = 0;
  const streamed = await measured(async () => {
    const conn = await openExportConnection(store, 'bench');
    try {
      const stream = await streamExport(conn, params, plan(params, { filters: {} }, hashKey), undefined, { format: 'csv' });
      await pipeline(stream, new Writable({
        write: (c: Buffer, _e, cb) => {
          bytes += c.length;
          // Counted with indexOf: a JavaScript loop over every byte (2.1 s for 93 MB while the test suite ran,
          // against 0.05 s) was inside the export's measured time; runs before 2026-11-26 23:30 UTC overstate it.
          for (let at = c.indexOf(10); at !== -1; at = c.indexOf(10, at + 1)) lines++;
          cb();
        },
      }));
    } finally {
      await conn.close();
    }
  });
  results.push({ backend, what: 'streamed CSV export (not compressed)', rows: lines - 1, seconds: streamed.seconds, cpu: streamed.cpu, mb: bytes / MB, peakRssMb: streamed.peakRssMb, round });
  say(`  ${backend} streamed CSV: ${streamed.seconds.toFixed(1)} s`);
  const native = sqliteFile ? await tool('sqlite3', ['-csv', sqliteFile, NATIVE_QUERY]) : await tool('psql', [url, '-c', `\\copy (${NATIVE_QUERY}) to stdout with csv`]);
  results.push({ backend, what: sqliteFile ? 'sqlite3 -csv (not compressed)' : 'psql \\copy (not compressed)', rows: native.lines, seconds: native.seconds, cpu: native.cpu, mb: native.bytes / MB, round });
  say(`  ${backend} native: ${native.seconds.toFixed(1)} s`);
  const ownLines = sqliteFile
    ? await tool('sqlite3', ['-list', '-noheader', sqliteFile, NATIVE_NDJSON_SQLITE])
    : await tool('psql', [url, '-c', `\\copy (${NATIVE_NDJSON_PG}) to stdout`]);
  results.push({ backend, what: sqliteFile ? 'sqlite3 json_object lines (not compressed)' : 'psql \\copy row_to_json (not compressed)', rows: ownLines.lines, seconds: ownLines.seconds, cpu: ownLines.cpu, mb: ownLines.bytes / MB, round });
  say(`  ${backend} native NDJSON: ${ownLines.seconds.toFixed(1)} s`);
}

/** A proxy that answers 404 to /api/v2/snapshots: the main store as an older version, for the paging baseline. */
async function olderMain(target: string): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/api/v2/snapshots')) return void res.writeHead(404).end('{}');
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (a) => {
      res.writeHead(a.statusCode ?? 502, a.headers);
      a.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function syncBench(dir: string): Promise<void> {
  const mainUrl = `sqlite:${join(dir, 'sync-main.db')}`;
  const mainStore = openStore(mainUrl);
  await migrateToLatest(mainStore.db);
  say(`seeding ${syncProducts} products for the sync …`);
  await seedStore(mainStore, { products: syncProducts, orders: 0, seed: 3 });
  const config = loadConfig({ DATABASE_URL: mainUrl, ADMIN_TOKEN: 'bench-admin-token-0123456789abcdefghijkl', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', TOKEN_RATE_LIMIT_BURST: '1000', SNAPSHOT_POLL_MS: '50', LOG_LEVEL: 'silent' }, {});
  const ctx = await createContext(config, mainStore);
  const app = await buildApp(ctx, { logger: false });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const runner = new SnapshotRunner({ store: mainStore, bus: ctx.bus, resources: ctx.resources, hashKey: ctx.hashKey, settings: config.snapshots, log: quiet });
  runner.start();
  const credential = await createCredential(mainStore.db, ctx.hashKey, 'bench follower', REQUIRED_SCOPES as Scope[]);
  const older = await olderMain(base);
  try {
    for (const [what, from] of [['initial sync via snapshots', base], ['initial sync by paging (older main)', older.url]] as const) {
      const followerUrl = `sqlite:${join(dir, `follower-${what.length}.db`)}`;
      const follower = openStore(followerUrl);
      await migrateToLatest(follower.db);
      const m = await measured(() => runSync({ store: follower, from, clientId: credential.clientId, clientSecret: credential.clientSecret, follow: false, log: quiet }));
      results.push({ backend: 'sqlite', what: `${what}: ${syncProducts} products`, rows: m.value.snapshot?.items ?? 0, seconds: m.seconds, peakRssMb: m.peakRssMb });
      say(`  ${what}: ${m.value.snapshot?.items} items in ${m.seconds.toFixed(1)} s (${m.value.snapshot?.via})`);
      await follower.close();
    }
  } finally {
    older.close();
    await runner.stop();
    await app.close();
    await mainStore.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-snapshots-'));
const uptime = execFileSync('uptime').toString().trim();
say(`uptime: ${uptime}`);
const products = Math.ceil(wantedRows / 4.5);
try {
  for (const backend of backends) {
    let store: Store;
    let url: string;
    let sqliteFile: string | undefined;
    let drop = async () => {};
    if (backend === 'sqlite') {
      sqliteFile = join(dir, 'exports.db');
      url = `sqlite:${sqliteFile}`;
      store = openStore(url);
    } else {
      const db = await createBenchDatabase();
      url = db.url;
      store = openStore(url);
      drop = () => dropBenchDatabase(db.name);
    }
    await migrateToLatest(store.db);
    say(`seeding ${products} products (about ${wantedRows} parameter values) into ${backend} …`);
    const seeded = await seedStore(store, { products, orders: 0, seed: 1 });
    say(`  ${seeded.productParameters} parameter values`);
    for (let round = 1; round <= rounds; round++) {
      say(`  round ${round} of ${rounds}`);
      await exportsOf(backend, store, url, sqliteFile, round);
    }
    await store.close();
    await drop();
  }
  if (syncProducts > 0) await syncBench(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** One row per backend and measurement: the medians over the rounds (seconds with their spread), the largest RSS peak. */
const summary: Array<Result & { spread?: string }> = [];
for (const r of results) {
  if (summary.some((x) => x.backend === r.backend && x.what === r.what)) continue;
  const all = results.filter((x) => x.backend === r.backend && x.what === r.what);
  const seconds = all.map((x) => x.seconds);
  const of = (pick: (x: Result) => number | undefined) => (all.some((x) => pick(x) === undefined) ? undefined : median(all.map((x) => pick(x)!)));
  summary.push({
    ...r,
    seconds: median(seconds),
    cpu: of((x) => x.cpu),
    peakRssMb: all.some((x) => x.peakRssMb !== undefined) ? Math.max(...all.map((x) => x.peakRssMb ?? 0)) : undefined,
    spread: all.length > 1 ? `${Math.min(...seconds).toFixed(2)}–${Math.max(...seconds).toFixed(2)}` : undefined,
  });
}
const table = summary.map((r) => `| ${r.backend} | ${r.what} | ${r.rows} | ${r.seconds.toFixed(2)}${r.spread ? ` (${r.spread})` : ''} | ${r.cpu === undefined ? '' : r.cpu.toFixed(2)} | ${r.mb === undefined ? '' : r.mb.toFixed(1)} | ${r.peakRssMb === undefined ? '' : `+${r.peakRssMb.toFixed(0)}`} |`);
/** Each snapshot's median time over the median of the database's own export, per backend: the figure the issue's aim (≤ 2×) is about. */
const ratios = backends.map((backend) => {
  const native = summary.find((r) => r.backend === backend && /sqlite3 -csv|psql \\copy \(/.test(r.what));
  const nativeLines = summary.find((r) => r.backend === backend && /json_object|row_to_json/.test(r.what));
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? `${(a / b).toFixed(2)}×` : '?');
  const snapshots = summary.filter((r) => r.backend === backend && r.what.startsWith('snapshot'));
  const parts = snapshots.map((r) => `${r.what.split(' ')[1]} ${ratio(r.seconds, native?.seconds)} (CPU ${ratio(r.cpu, native?.cpu)})`);
  const ndjson = snapshots.find((r) => r.what.startsWith('snapshot ndjson'));
  return [
    `- ${backend}: ${parts.join(', ')} the database's own CSV export, in wall time (CPU time), medians of ${rounds} round${rounds === 1 ? '' : 's'}`,
    `- ${backend}: ndjson.gz ${ratio(ndjson?.seconds, nativeLines?.seconds)} the database's own JSON lines, in wall time`,
  ].join('\n');
});
/** Every round as measured. */
const rawRounds = results.filter((r) => r.round !== undefined).map((r) => `| ${r.backend} | ${r.round} | ${r.what} | ${r.seconds.toFixed(2)} | ${r.cpu === undefined ? '' : r.cpu.toFixed(2)} |`);
const report = [
  `# Snapshots benchmark, ${day}`,
  '',
  `\`npm run bench:snapshots -- --rows ${wantedRows} --sync-products ${syncProducts} --backends ${backends.join(',')}\`; \`uptime\` at the start: \`${uptime}\` (2 cores, shared with other work: wall times are pessimistic).`,
  'Peak RSS is this process\'s, above where the step started (the database tools run in their own process and are not counted).',
  'CPU s: this process\'s user + system time over the step (its zlib threads included), or the tool\'s; on PostgreSQL the client\'s alone (node or psql), not the server\'s.',
  '',
  `Seconds and CPU s are medians over ${rounds} round${rounds === 1 ? '' : 's'} (each round takes the five measurements of a backend in turn), with the fastest and slowest round's seconds; peak RSS is the largest.`,
  '',
  '| backend | what | rows | seconds | CPU s | MB | peak RSS (MB) |',
  '|---|---|---|---|---|---|---|',
  ...table,
  '',
  ...ratios,
  '',
  ...(rawRounds.length ? ['Each round:', '', '| backend | round | what | seconds | CPU s |', '|---|---|---|---|---|', ...rawRounds, ''] : []),
].join('\n');
writeFileSync(out, report);
say(`\n${report}\nwritten to ${out}`);
