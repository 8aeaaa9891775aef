// `npm run bench:exports [-- --options]`: full CSV, NDJSON and XLSX exports of large collections, timed beside
// the database's own CSV export (`sqlite3 -csv`, `psql \copy`) and, for NDJSON, its own JSON lines of the
// products, with the server's peak memory; XLSX is also compared with the API's CSV. See docs/benchmarks.md,
// "Exports". Options: --products 100000 --orders 100000 --big-products 225000 (0 skips the 1 000 000-row case)
// --backends sqlite,postgres --fresh (seed again) --dir <cache dir for seeded files> --repeat 3 (runs of each case:
// times and CPU are their medians, RSS growth the largest).
// Exports are fetched uncompressed (`Accept-Encoding: identity`), as the database tools write them; a CSV case
// of each collection is fetched gzipped too, to show what compression adds.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SQLite from 'better-sqlite3';
import ExcelJS from 'exceljs';
import { stringify } from 'csv-stringify/sync';
import pg from 'pg';
import { numberOption, parseArgs } from './lib/args.ts';
import { freePort } from './lib/ports.ts';
import { PG_ADMIN_URL } from './lib/postgres.ts';
import { startServer, type Server } from './lib/processes.ts';
import { median } from './lib/report.ts';
import { exportLayout } from '../src/listing/formats/columns.ts';
import { CsvEncoder } from '../src/listing/formats/csv.ts';
import { XlsxExportWriter } from '../src/listing/formats/xlsx.ts';
import { products as productsDef } from '../src/modules/products/resource.ts';

const CLI = join(import.meta.dirname, '..', 'bin', 'store-api.js');
const MB = 1024 * 1024;

interface Row {
  backend: string;
  what: string;
  rows: number;
  ttfb: number;
  total: number;
  mb: number;
  peakRss?: number;
  rssGrowth?: number;
  /** CPU seconds (user + system) the exporting process spent: a fairer figure than wall time on a busy machine. */
  cpu?: number;
}

const rows: Row[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

// ---------------------------------------------------------------------------------------------------------
// Seeded stores, kept between runs (seeding 100 000 products and orders takes about a minute).

async function seeded(url: string, products: number, orders: number, counts: () => Promise<[number, number]>, reset: () => Promise<void>, fresh: boolean): Promise<void> {
  if (!fresh) {
    try {
      const [p, o] = await counts();
      if (p === products && o === orders) {
        say(`reusing ${url.replace(/\?.*/, '')} (${products} products, ${orders} orders)`);
        return;
      }
    } catch {
      // Not there yet.
    }
  }
  await reset();
  say(`seeding ${products} products and ${orders} orders into ${url.replace(/\?.*/, '')} …`);
  const started = Date.now();
  await run(process.execPath, [CLI, '--database', url, 'seed', '--products', String(products), '--orders', String(orders), '--json']);
  say(`  seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function sqliteStore(dir: string, products: number, orders: number, fresh: boolean): Promise<string> {
  const file = join(dir, `sqlite-${products}-${orders}.db`);
  const counts = async (): Promise<[number, number]> => {
    if (!existsSync(file)) throw new Error('absent');
    const db = new SQLite(file, { readonly: true });
    try {
      const one = (t: string) => (db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n;
      return [one('products'), one('orders')];
    } finally {
      db.close();
    }
  };
  const reset = async () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  };
  await seeded(`sqlite:${file}`, products, orders, counts, reset, fresh);
  return file;
}

async function pgAdmin<T>(work: (c: pg.Client) => Promise<T>, database?: string): Promise<T> {
  const url = new URL(PG_ADMIN_URL);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function postgresStore(products: number, orders: number, fresh: boolean): Promise<string> {
  const name = `store_api_bench_exports_${products}_${orders}`;
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const counts = () =>
    pgAdmin(async (c) => {
      const one = async (t: string) => Number((await c.query(`select count(*) as n from ${t}`)).rows[0].n);
      return [await one('products'), await one('orders')] as [number, number];
    }, name);
  const reset = async () => {
    await pgAdmin(async (c) => {
      await c.query(`drop database if exists ${name} with (force)`);
      await c.query(`create database ${name}`);
    });
  };
  await seeded(url.toString(), products, orders, counts, reset, fresh);
  return url.toString();
}

// ---------------------------------------------------------------------------------------------------------
// Measuring.

const status = (pid: number, key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resets the kernel's peak-RSS mark of a process (Linux `clear_refs` 5), so that VmHWM then measures one request. */
function resetPeak(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return status(pid, 'VmRSS');
}

interface Timed {
  ttfb: number;
  total: number;
  bytes: number;
  lines: number;
}

async function download(url: string, headers: Record<string, string>): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let ttfb = 0;
  let bytes = 0;
  let lines = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!ttfb) ttfb = performance.now() - started;
    bytes += value.length;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
  }
  return { ttfb: ttfb / 1000, total: (performance.now() - started) / 1000, bytes, lines };
}

/**
 * `measure` run `repeat` times (one run on a busy two-core machine moved a ratio by a third): each figure the
 * median of its runs, but memory the largest and the sizes those of the first run.
 */
async function repeated<T extends Timed & { peakRss?: number; cpu?: number; rssGrowth?: number }>(measure: () => Promise<T>): Promise<T> {
  const runs: T[] = [];
  for (let i = 0; i < repeat; i++) runs.push(await measure());
  const of = (key: 'ttfb' | 'total' | 'cpu') => median(runs.map((r) => r[key] ?? 0));
  const most = (key: 'peakRss' | 'rssGrowth') => (runs[0][key] === undefined ? undefined : Math.max(...runs.map((r) => r[key] ?? 0)));
  return { ...runs[0], ttfb: of('ttfb'), total: of('total'), cpu: runs[0].cpu === undefined ? undefined : of('cpu'), peakRss: most('peakRss'), rssGrowth: most('rssGrowth') };
}

/** A command's CSV on stdout, timed (`repeat` times: see `repeated`); its peak memory from GNU time. */
function floor(command: string, args: string[]): Promise<Timed & { peakRss: number; cpu: number }> {
  return repeated(() => floorOnce(command, args));
}

function floorOnce(command: string, args: string[]): Promise<Timed & { peakRss: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%M %U %S', command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let ttfb = 0;
    let bytes = 0;
    let lines = 0;
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      if (!ttfb) ttfb = performance.now() - started;
      bytes += d.length;
      for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++;
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${command} exited with ${code}: ${err}`));
      const [kb, user, system] = err.trim().split('\n').pop()!.split(' ').map(Number);
      resolve({ ttfb: ttfb / 1000, total: (performance.now() - started) / 1000, bytes, lines, peakRss: kb / 1024, cpu: user + system });
    });
  });
}

async function token(server: Server, databaseUrl: string): Promise<Record<string, string>> {
  const issued = JSON.parse(await run(process.execPath, [CLI, '--database', databaseUrl, 'credentials', 'create', '--name', 'bench exports', '--scopes', 'all', '--json'])) as { clientId: string; clientSecret: string };
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret }),
  });
  return { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` };
}

async function withServer<T>(databaseUrl: string, work: (server: Server, auth: Record<string, string>) => Promise<T>): Promise<T> {
  const port = await freePort();
  const server = await startServer(
    'store-api',
    process.execPath,
    [CLI, '--database', databaseUrl, 'serve', '--host', '127.0.0.1', '--port', String(port)],
    { LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' },
    `http://127.0.0.1:${port}/healthz`,
  );
  try {
    return await work(server, await token(server, databaseUrl));
  } finally {
    await server.stop();
  }
}

/**
 * One export, on a server of its own: the server's memory after an earlier large export says little about the
 * next one (V8 keeps the heap it grew), so each case starts from an idle, warmed-up server, and is then run
 * `repeat` times on it (see `repeated`: RSS growth is the largest of those runs, the first on a fresh heap).
 */
async function exportCase(backend: string, databaseUrl: string, collection: string, format: 'csv' | 'ndjson' | 'xlsx', rowsExpected?: number, coding = 'identity'): Promise<void> {
  await withServer(databaseUrl, async (server, credentials) => {
    // Uncompressed by default, as the database tools write it: fetch would otherwise ask for (and get) brotli,
    // and the figure would be of the compressor. `gzip` cases are there to show what compression adds.
    const auth = { ...credentials, 'accept-encoding': coding };
    const pid = server.child.pid!;
    // Warm the route (and the page cache) with a small page, so the figures are of the export itself.
    await download(`${server.url}/api/v2/${collection}?format=${format}&limit=10`, auth);
    const t = await repeated(async () => {
      const baseline = resetPeak(pid);
      const cpuBefore = cpuSeconds(pid);
      const one = await download(`${server.url}/api/v2/${collection}?format=${format}`, auth);
      const peakRss = status(pid, 'VmHWM');
      return { ...one, cpu: cpuSeconds(pid) - cpuBefore, peakRss, rssGrowth: peakRss - baseline };
    });
    const count = format === 'csv' ? t.lines - 1 : format === 'ndjson' ? t.lines : (rowsExpected ?? 0);
    const what = `API ${format.toUpperCase()} ${collection}${coding === 'identity' ? '' : ` (${coding})`}`;
    rows.push({ backend, what, rows: count, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, rssGrowth: t.rssGrowth, cpu: t.cpu });
    say(`  ${backend} ${what}: ${t.total.toFixed(2)} s, ${(t.bytes / MB).toFixed(1)} MB, RSS +${t.rssGrowth!.toFixed(0)} MB`);
  });
}

// ---------------------------------------------------------------------------------------------------------
// The encoders alone, in process: the design question behind the hand-written CSV and sheet XML.

const discard = () => new Writable({ write: (_chunk, _enc, cb) => cb() });

async function encoders(file: string): Promise<void> {
  const db = new SQLite(file, { readonly: true });
  const layout = exportLayout(productsDef);
  const select = `select ${productsDef.fields.map((f) => `${f.column.replace('t.', '')} as "${f.name}"`).join(', ')} from products order by id`;
  const objects = db.prepare(select).all() as Record<string, unknown>[];
  const arrays = db.prepare(select).raw(true).all() as unknown[][];
  db.close();
  const time = async (what: string, work: () => unknown) => {
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    rows.push({ backend: 'encode', what, rows: arrays.length, ttfb: 0, total: seconds, mb: 0 });
    say(`  ${what}: ${seconds.toFixed(2)} s`);
  };
  await time('csv-stringify (row objects)', () => stringify(objects, { header: true }));
  await time('CsvEncoder (this API)', () => {
    const encoder = new CsvEncoder(layout.columns, { delimiter: ',', bom: false, escapeFormulas: true });
    let chars = 0;
    for (let i = 0; i < arrays.length; i += 2000) for (const piece of encoder.rows(arrays.slice(i, i + 2000))) chars += piece.length;
    return chars;
  });
  await time('ExcelJS rows (addRow + commit)', async () => {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: discard(), useSharedStrings: false, useStyles: true });
    const sheet = workbook.addWorksheet('products');
    sheet.columns = layout.columns.map((c) => ({ key: c.name, style: c.type === 'datetime' ? { numFmt: 'yyyy-mm-dd hh:mm:ss' } : {} }));
    for (const o of objects) sheet.addRow({ ...o, createdAt: new Date(o.createdAt as string), updatedAt: new Date(o.updatedAt as string) }).commit();
    sheet.commit();
    await workbook.commit();
  });
  await time('XlsxExportWriter (this API)', async () => {
    const writer = new XlsxExportWriter(discard(), 'products', layout.columns);
    const signal = new AbortController().signal;
    for (let i = 0; i < arrays.length; i += 2000) await writer.write(arrays.slice(i, i + 2000), signal);
    await writer.finish();
  });
}

// ---------------------------------------------------------------------------------------------------------

function report(products: number, orders: number): void {
  const f = (n: number | undefined, d = 2) => (n === undefined ? '' : n.toFixed(d));
  say('');
  say(`Exports of ${products} products and ${orders} orders (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; medians of ${repeat} runs, RSS the largest)`);
  say('');
  say('| backend | what | rows | TTFB s | total s | CPU s | MB | peak RSS MB | RSS growth MB |');
  say('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) say(`| ${r.backend} | ${r.what} | ${r.rows} | ${r.ttfb ? f(r.ttfb, 3) : ''} | ${f(r.total)} | ${f(r.cpu)} | ${r.mb ? f(r.mb, 1) : ''} | ${f(r.peakRss, 0)} | ${f(r.rssGrowth, 0)} |`);
  // Each export against the database's own CSV export of the same rows, measured in the same run (NDJSON also
  // against the database's own JSON lines).
  const floors: Record<string, string> = { products: 'products', orders: 'orders ⋈ items', 'product-parameters': 'product_parameters' };
  say('');
  for (const r of rows.filter((x) => x.what.startsWith('API '))) {
    const collection = r.what.split(' ')[2];
    // The database's own JSON lines are the NDJSON exports' second floor only.
    const bases = rows.filter((x) => x.backend === r.backend && !x.what.startsWith('API ') && x.backend !== 'encode' && x.what.includes(` ${floors[collection]}`) && (!x.what.includes('JSON lines') || r.what.includes('NDJSON')));
    // psql's CPU leaves out the database server's, which does the work: only SQLite's CPU figures compare.
    const against = bases.map((base) => `${(r.total / base.total).toFixed(1)}× the time${r.backend === 'sqlite' ? `, ${(r.cpu! / base.cpu!).toFixed(1)}× the CPU` : ''} of \`${base.what}\``);
    if (against.length) say(`- ${r.backend} ${r.what}: ${against.join('; ')}`);
  }
  // XLSX against the API's own CSV of the same rows (issue 15: at most 2.5×).
  say('');
  for (const x of rows.filter((r) => r.what.startsWith('API XLSX '))) {
    const csv = rows.find((r) => r.backend === x.backend && r.what === x.what.replace('XLSX', 'CSV'));
    if (csv) say(`- ${x.backend} ${x.what}: ${(x.total / csv.total).toFixed(1)}× the time, ${(x.cpu! / csv.cpu!).toFixed(1)}× the server CPU of the API's CSV`);
  }
}

const { options } = parseArgs(process.argv.slice(2));
const products = numberOption(options, 'products', 100_000);
const orders = numberOption(options, 'orders', 100_000);
const bigProducts = options.get('big-products') === '0' ? 0 : numberOption(options, 'big-products', 225_000);
const backends = (options.get('backends') ?? 'sqlite,postgres').split(',');
const fresh = options.has('fresh');
const repeat = numberOption(options, 'repeat', 3);
const dir = options.get('dir') ?? join(tmpdir(), 'store-api-bench-exports');
mkdirSync(dir, { recursive: true });

/**
 * The database's own CSV of the rows each export holds. Orders twice: joined as stored (the cheapest), and in the
 * order the API exports them (its default sort, newest first, items in position order; orders without items
 * kept), which costs the database an index walk and a sort. Products come in id order either way.
 */
function floorQueries(tool: string): Array<[string, string]> {
  return [
    [`${tool} products`, 'select * from products order by id'],
    [`${tool} orders ⋈ items`, 'select * from orders o join order_items i on i.order_id = o.id'],
    [`${tool} orders ⋈ items, API order`, 'select * from orders o left join order_items i on i.order_id = o.id order by o.created_at desc, o.id desc, i.position'],
  ];
}

async function sqliteCases(): Promise<void> {
  const file = await sqliteStore(dir, products, orders, fresh);
  const items = Number(new SQLite(file, { readonly: true }).prepare('select count(*) as n from order_items').pluck().get());
  for (const [what, query] of floorQueries('sqlite3 -csv')) {
    const t = await floor('sqlite3', ['-csv', '-header', file, query]);
    rows.push({ backend: 'sqlite', what, rows: t.lines - 1, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, cpu: t.cpu });
  }
  {
    // The products as JSON lines written by SQLite itself (json_object of every column), for the NDJSON export.
    const db = new SQLite(file, { readonly: true });
    const columns = db.prepare("select name from pragma_table_info('products')").pluck().all() as string[];
    db.close();
    const query = `select json_object(${columns.map((c) => `'${c}', "${c}"`).join(', ')}) from products order by id`;
    const t = await floor('sqlite3', ['-list', '-noheader', file, query]);
    rows.push({ backend: 'sqlite', what: 'sqlite3 products as JSON lines (json_object)', rows: t.lines, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, cpu: t.cpu });
  }
  for (const format of ['csv', 'ndjson', 'xlsx'] as const) {
    await exportCase('sqlite', `sqlite:${file}`, 'products', format, products);
    await exportCase('sqlite', `sqlite:${file}`, 'orders', format, items);
  }
  for (const collection of ['products', 'orders']) await exportCase('sqlite', `sqlite:${file}`, collection, 'csv', undefined, 'gzip');
  say('encoders alone, 100 000 product rows in memory:');
  await encoders(file);
  if (bigProducts > 0) {
    const big = await sqliteStore(dir, bigProducts, 0, fresh);
    const t = await floor('sqlite3', ['-csv', '-header', big, 'select * from product_parameters']);
    rows.push({ backend: 'sqlite', what: 'sqlite3 -csv product_parameters', rows: t.lines - 1, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, cpu: t.cpu });
    const parameters = Number(new SQLite(big, { readonly: true }).prepare('select count(*) from product_parameters').pluck().get());
    for (const format of ['csv', 'xlsx'] as const) await exportCase('sqlite', `sqlite:${big}`, 'product-parameters', format, parameters);
  }
}

async function postgresCases(): Promise<void> {
  const url = await postgresStore(products, orders, fresh);
  for (const [what, query] of floorQueries('psql \\copy')) {
    const t = await floor('psql', [url, '-c', `\\copy (${query}) to stdout with csv header`]);
    rows.push({ backend: 'postgres', what, rows: t.lines - 1, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, cpu: t.cpu });
  }
  {
    // The products as JSON lines written by PostgreSQL itself, for the NDJSON export.
    const t = await floor('psql', [url, '-c', '\\copy (select row_to_json(p) from products p order by p.id) to stdout']);
    rows.push({ backend: 'postgres', what: 'psql \\copy products as JSON lines (row_to_json)', rows: t.lines, ttfb: t.ttfb, total: t.total, mb: t.bytes / MB, peakRss: t.peakRss, cpu: t.cpu });
  }
  const items = await pgAdmin(async (c) => Number((await c.query('select count(*) as n from order_items')).rows[0].n), new URL(url).pathname.slice(1));
  for (const format of ['csv', 'ndjson', 'xlsx'] as const) {
    await exportCase('postgres', url, 'products', format, products);
    await exportCase('postgres', url, 'orders', format, items);
  }
  for (const collection of ['products', 'orders']) await exportCase('postgres', url, collection, 'csv', undefined, 'gzip');
}

// A failing backend (say, PostgreSQL down) must not lose the figures of the other.
for (const [name, cases] of [['sqlite', sqliteCases], ['postgres', postgresCases]] as const) {
  if (!backends.includes(name)) continue;
  try {
    await cases();
  } catch (err) {
    process.exitCode = 1;
    say(`${name} cases failed: ${(err as Error).message}`);
  }
}
report(products, orders);
