// The core benchmark (issue 2): listing and single-item reads, token issuance and seeding, on SQLite and
// PostgreSQL, each read measured against two ceilings run the same way on the same machine:
//   (a) a bare node:http server answering the API's own bytes from memory (bench/ceilings/static.ts);
//   (b) a bare node:http server running the API's own SQL through the same driver + JSON.stringify
//       (bench/ceilings/bare-query.ts);
//   (c) PostgreSQL only: a bare node:http server running the API's own SQL wrapped so that PostgreSQL builds the
//       page's JSON (row_to_json, as PostgREST does; bench/ceilings/pg-json.ts), byte for byte the API's answer;
//   (f) one product only: (b)'s answers served by Fastify with nothing else (bench/ceilings/bare-fastify.ts), what
//       the framework alone costs per request.
// Every server runs as a child process; autocannon runs in another (bench/lib/load-worker.mjs).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CASES_FILE_ENV, type BenchCase, type CasesFile } from './lib/cases.ts';
import { onAbort } from './lib/cleanup.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { freePort } from './lib/ports.ts';
import { createBenchDatabase, dropBenchDatabase, postgresVersion } from './lib/postgres.ts';
import { runMeasured, startServer, type Server } from './lib/processes.ts';
import { findSeed, keepSeed, seedCacheKey, type CachedSeed, type SeedRecord } from './lib/seed-cache.ts';
import { binaryOf, perfMissing, perfShares, recordPerf } from './lib/perf.ts';
import { monotonicUs, summarizeProfile, type ProfileWindow } from './lib/profile.ts';
import { median, round, table } from './lib/report.ts';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { BROTLI_QUALITY, GZIP_LEVEL } from '../src/http/compression.ts';

export interface CoreOptions {
  products: number;
  connections: number;
  duration: number;
  warmup: number;
  /** Seconds of warm-up before each round after the first (the servers are warm by then); default min(1, warmup). */
  rewarmup?: number;
  backends: Array<'sqlite' | 'postgres'>;
  /** Also measure the API with LOG_LEVEL=info (one log line per request). */
  infoLogs: boolean;
  /** Alternate the servers this many times per case; each figure is the median over the rounds. */
  rounds: number;
  /** Run the API under `node --cpu-prof` and summarise where its time goes (slows it: figures are then not comparable). */
  profile: boolean;
  /**
   * After each case's rounds, one more load of the API, (b) and (f) each under `perf record` (not counted in the
   * tables above it): their CPU per answer by binary, and the native and kernel symbols where the API spends more.
   */
  perf?: boolean;
  /** The Markdown report; default bench/results/core-<date>.md. */
  out?: string;
  /** Already seeded databases to measure instead of seeding new ones (for iterating on the API): not seeded, not dropped. */
  existing: Partial<Record<'sqlite' | 'postgres', string>>;
  /** Only the read cases whose name contains one of these. */
  only?: string[];
  /** The `--quick` preset (only named in the report and the file name). */
  quick?: boolean;
  /**
   * Take the seeded store from the seed cache (bench/lib/seed-cache.ts), seeding and keeping it there on a miss.
   * The seeding figures are then those of the seeding that made the cached store.
   */
  seedCache?: boolean;
  /** Also measure the first page compressed (br and gzip at the API's levels), alternating with the other servers. */
  compressed?: boolean;
  /** Give the products names and descriptions with Czech letters before measuring (see CZECH_TEXT). */
  czech?: boolean;
}

type ServerKind = 'api' | 'api-info' | 'api-br' | 'api-gzip' | 'static' | 'bare' | 'pgjson' | 'fastify';
/** The API asked for a compressed answer: the same server, with Accept-Encoding. */
const CODINGS: Partial<Record<ServerKind, string>> = { 'api-br': 'br', 'api-gzip': 'gzip' };
/** One server's load under `perf record` (`--perf`): its CPU per answer then, and the samples' shares. */
interface PerfSplit {
  backend: string;
  case: string;
  server: ServerKind;
  cpuMicros: number;
  byDso: Map<string, number>;
  bySymbol: Map<string, number>;
}

interface Measurement {
  backend: string;
  case: string;
  server: ServerKind;
  result: LoadResult;
}

const NODE = process.execPath;
const CLI = 'bin/store-api.js';
const TSX = ['--import', 'tsx'];
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Backend {
  name: 'sqlite' | 'postgres';
  url: string;
  sizeMb(): Promise<number>;
  dispose(): Promise<void>;
}

/** The run's own store: an existing one, a copy of a cached seeded one, or an empty one to seed. */
async function openBackend(name: 'sqlite' | 'postgres', existing: string | undefined, cached: CachedSeed | undefined): Promise<Backend> {
  if (existing) return { name, url: existing, sizeMb: async () => 0, dispose: async () => {} };
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-bench-'));
    const path = join(dir, 'store.db');
    const forget = onAbort(() => rmSync(dir, { recursive: true, force: true }));
    if (cached?.file) copyFileSync(cached.file, path);
    return {
      name,
      url: `sqlite:${path}`,
      sizeMb: async () => round(readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0) / 2 ** 20),
      dispose: async () => {
        forget();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await createBenchDatabase(cached?.template);
  const forget = onAbort(() => dropBenchDatabase(db.name));
  return {
    name,
    url: db.url,
    sizeMb: async () => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const size = Number((await client.query('select pg_database_size(current_database()) as s')).rows[0].s);
      await client.end();
      return round(size / 2 ** 20);
    },
    dispose: async () => {
      forget();
      await dropBenchDatabase(db.name);
    },
  };
}

/**
 * Planner statistics, as a store that has been running has them (PostgreSQL's autovacuum gathers them within a
 * minute or so of a bulk load; on SQLite `ANALYZE` or `PRAGMA optimize` gathers them): right after a bulk seed the
 * planner has none, and on PostgreSQL it then picks a bitmap plan for the filtered page that is 8 times slower.
 */
async function analyze(backend: Backend): Promise<void> {
  if (backend.name === 'postgres') {
    const client = new pg.Client({ connectionString: backend.url });
    await client.connect();
    await client.query('analyze');
    await client.end();
  } else {
    const conn = new SQLite(backend.url.slice('sqlite:'.length));
    conn.exec('analyze');
    conn.close();
  }
}

/**
 * `--czech`: the seeded products' names and descriptions as a Czech store's are, with letters beyond ASCII. V8
 * keeps a text of ASCII alone one byte per character, and every pass that turns a page into UTF-8 bytes (hash,
 * length, socket write) is close to a copy; one such letter makes the whole page a two-byte string, and each
 * pass costs several times more (bench/results/utf8-body-2026-11-27.md). Applied to the run's own copy of the
 * store, after the seed cache kept its ASCII one; the same rows for every server, so the bytes checks still hold.
 */
const CZECH_TEXT = "update products set name = name || ' – žluťoučký kůň', description = replace(description, 'e', 'é')";

async function czech(backend: Backend): Promise<void> {
  if (backend.name === 'postgres') {
    const client = new pg.Client({ connectionString: backend.url });
    await client.connect();
    await client.query(CZECH_TEXT);
    await client.end();
  } else {
    const conn = new SQLite(backend.url.slice('sqlite:'.length));
    conn.exec(CZECH_TEXT);
    conn.close();
  }
  await analyze(backend);
}

async function cli(url: string, ...args: string[]): Promise<string> {
  return (await runMeasured(NODE, [CLI, '--database', url, ...args])).stdout;
}

async function startApi(url: string, logLevel: string, profileDir?: string): Promise<Server> {
  const port = await freePort();
  const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  return startServer('api', NODE, [...flags, CLI, '--database', url, 'serve'], {
    HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: logLevel,
    RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', ADMIN_TOKEN: 'bench-admin-token-0123456789abcdefghij',
    // The token endpoint's own limits (per credential and per address) would measure 429s instead of issuance.
    TOKEN_RATE_LIMIT_RPS: '1000000', TOKEN_RATE_LIMIT_BURST: '1000000', TOKEN_ADDRESS_RATE_LIMIT_RPS: '1000000', TOKEN_ADDRESS_RATE_LIMIT_BURST: '1000000',
  }, `http://127.0.0.1:${port}/healthz`);
}

async function startCeiling(script: 'static' | 'bare-query' | 'bare-fastify' | 'pg-json', url: string, casesFile: string): Promise<Server> {
  const port = await freePort();
  return startServer(script, NODE, [...TSX, `bench/ceilings/${script}.ts`], { PORT: String(port), DATABASE_URL: url, [CASES_FILE_ENV]: casesFile }, `http://127.0.0.1:${port}/`);
}

async function fetchText(url: string, init: RequestInit = {}): Promise<string> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

/** Rounds of one case on one server: the median of each figure, the sums of the counts. */
function combine(results: LoadResult[]): LoadResult {
  type Figure = Exclude<keyof LoadResult, 'dbCpuMicrosPerRequest'>;
  const of = (k: Figure) => median(results.map((r) => r[k]));
  const sum = (k: Figure) => results.reduce((n, r) => n + r[k], 0);
  return {
    rps: of('rps'), rpsMean: of('rpsMean'), p50: of('p50'), p99: of('p99'), total: sum('total'), non2xx: sum('non2xx'), errors: sum('errors'),
    timeouts: sum('timeouts'), bytesPerSec: of('bytesPerSec'), cpuMicrosPerRequest: of('cpuMicrosPerRequest'),
    dbCpuMicrosPerRequest: results[0]?.dbCpuMicrosPerRequest == null ? null : median(results.map((r) => r.dbCpuMicrosPerRequest ?? NaN)),
  };
}

/** The four read cases; the deep page's cursor is found by walking the listing with 1000-item pages. */
async function buildCases(base: string, auth: Record<string, string>, products: number): Promise<BenchCase[]> {
  const pages = Math.max(1, Math.floor((products * 0.9) / 1000));
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    const page = JSON.parse(await fetchText(`${base}/api/v2/products?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: auth }));
    cursor = page.pagination.nextCursor;
  }
  const deep = JSON.parse(await fetchText(`${base}/api/v2/products?limit=100&cursor=${encodeURIComponent(cursor!)}`, { headers: auth }));
  const id = Number(deep.data[50].id);
  return [
    { name: `first page (limit=100)`, path: '/api/v2/products?limit=100', list: { limit: 100, filters: {} } },
    { name: 'filtered page (status=active&brandId=3)', path: '/api/v2/products?limit=100&status=active&brandId=3', list: { limit: 100, filters: { status: 'active', brandId: '3' } } },
    { name: `deep cursor page (after ${pages * 1000})`, path: `/api/v2/products?limit=100&cursor=${encodeURIComponent(cursor!)}`, list: { limit: 100, cursor, filters: {} } },
    { name: `single item (/products/${id})`, path: `/api/v2/products/${id}`, id },
  ];
}

/** The body a server sends, its bytes as they go on the wire (fetch would decode a compressed one). */
function wireBytes(url: string, headers: Record<string, string>): Promise<{ bytes: number; coding: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => (res.statusCode === 200 ? resolve({ bytes, coding: String(res.headers['content-encoding'] ?? 'identity') }) : reject(new Error(`GET ${url} answered ${res.statusCode}`))));
      res.on('error', reject);
    }).on('error', reject);
  });
}

type Seeding = SeedRecord & { backend: string; cached: boolean };

export async function runCore(o: CoreOptions): Promise<void> {
  // It rewrites the products: never those of a database the run was pointed at.
  if (o.czech && Object.values(o.existing).some(Boolean)) throw new Error('--czech changes the store it measures; it takes a seeded store, not --sqlite-url or --postgres-url');
  const work = mkdtempSync(join(tmpdir(), 'store-api-bench-run-'));
  onAbort(() => rmSync(work, { recursive: true, force: true }));
  const measurements: Measurement[] = [];
  const seeds: Seeding[] = [];
  const tokens: Array<{ backend: string; result: LoadResult }> = [];
  const sizes = new Map<string, number>();
  const wire = new Map<string, number>();
  const apiRss = new Map<string, number>();
  const serverRss = new Map<string, number>();
  const profiles: string[] = [];
  const perfSplits: PerfSplit[] = [];
  if (o.perf) {
    const missing = perfMissing();
    if (missing) throw new Error(`--perf: ${missing}`);
  }
  let caseNames: string[] = [];
  const loads: number[] = [loadavg()[0]];
  const failures: string[] = [];
  const rewarmup = o.rewarmup ?? Math.min(1, o.warmup);
  // Wall time by phase: where a run's minutes go (the seeding, the servers' start, the loads).
  const spent = new Map<string, number>();
  const timed = async <T>(phase: string, work: () => Promise<T>): Promise<T> => {
    const from = performance.now();
    try {
      return await work();
    } finally {
      spent.set(phase, (spent.get(phase) ?? 0) + (performance.now() - from) / 1000);
    }
  };
  const seedKey = o.seedCache ? seedCacheKey({ products: o.products, orders: 0, seed: 1 }) : undefined;

  try {
    for (const name of o.backends) {
      const cached = seedKey && !o.existing[name] ? await findSeed(name, seedKey) : undefined;
      const backend = await timed(cached ? 'copying the cached store' : 'seeding', () => openBackend(name, o.existing[name], cached));
      try {
        // A backend that fails (a server that does not start on an overloaded machine, PostgreSQL away) must not
        // lose the other's figures: its error goes in the report and the run exits non-zero.
        await measureBackend(name, backend, cached).catch((error: Error) => {
          failures.push(`${name}: ${error.message.split('\n')[0]}`);
          say(`\n!! ${name} failed: ${error.message}`);
          process.exitCode = 1;
        });
      } finally {
        await timed('stopping', () => backend.dispose());
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  /** A credential with every scope in a seeded store: the cached one, or a new one (and the store then seeded and kept). */
  async function prepare(name: 'sqlite' | 'postgres', backend: Backend, cached: CachedSeed | undefined): Promise<SeedRecord['credential']> {
    const create = async () => JSON.parse(await cli(backend.url, 'credentials', 'create', '--name', 'bench', '--scopes', 'all', '--json')) as SeedRecord['credential'];
    if (o.existing[name]) {
      say(`\n== ${name}: the existing database ${o.existing[name]}`);
      return create();
    }
    if (cached) {
      say(`\n== ${name}: ${o.products} products copied from the seed cache (seeded ${cached.record.seededAt.slice(0, 16)} in ${cached.record.seconds} s)`);
      seeds.push({ ...cached.record, backend: name, cached: true });
      return cached.record.credential;
    }
    say(`\n== ${name}: seeding ${o.products} products`);
    const seeded = await runMeasured(NODE, [CLI, '--database', backend.url, 'seed', '--products', String(o.products), '--json']);
    say(`  seeded in ${round(seeded.seconds, 1)} s, peak RSS ${seeded.peakRssMb} MB`);
    await analyze(backend);
    const record: SeedRecord = { seconds: round(seeded.seconds, 1), peakRssMb: seeded.peakRssMb, sizeMb: await backend.sizeMb(), seededAt: new Date().toISOString(), credential: await create() };
    seeds.push({ ...record, backend: name, cached: false });
    if (seedKey) await keepSeed(name, seedKey, backend.url, record);
    return record.credential;
  }

  async function measureBackend(name: 'sqlite' | 'postgres', backend: Backend, cached: CachedSeed | undefined): Promise<void> {
    const credential = await timed(cached ? 'copying the cached store' : 'seeding', () => prepare(name, backend, cached));
    if (o.czech) await timed('giving the products Czech texts', () => czech(backend));
    const form = `grant_type=client_credentials&client_id=${credential.clientId}&client_secret=${encodeURIComponent(credential.clientSecret)}`;
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };

    const apiWindows: ProfileWindow[] = [];
    const profileDir = o.profile ? join('bench', 'results', 'profiles', name) : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    const api = await timed('starting servers', () => startApi(backend.url, 'warn', profileDir));
    const token = JSON.parse(await fetchText(`${api.url}/oauth/token`, { method: 'POST', headers: formHeaders, body: form })).access_token as string;
    const auth = { authorization: `Bearer ${token}` };
    const cases = await timed('finding the cases', async () => (await buildCases(api.url, auth, o.products)).filter((c) => !o.only || o.only.some((w) => c.name.includes(w))));
    caseNames = cases.map((c) => c.name);
    const bodies: Record<string, string> = {};
    for (const c of cases) {
      bodies[c.path] = await fetchText(api.url + c.path, { headers: auth });
      sizes.set(c.name, Buffer.byteLength(bodies[c.path]));
    }
    const casesFile = join(work, `${name}-cases.json`);
    writeFileSync(casesFile, JSON.stringify({ collection: 'products', cases, bodies } satisfies CasesFile));

    // Every server runs at once (an idle one costs nothing) so that each case can alternate between them.
    const servers: Array<{ kind: ServerKind; server: Server }> = [{ kind: 'api', server: api }];
    try {
      // Started side by side: each spends seconds loading its modules, much of it waiting on the disk.
      const starting: Array<[ServerKind, Promise<Server>]> = [
        ...(o.infoLogs ? [['api-info', startApi(backend.url, 'info')] as [ServerKind, Promise<Server>]] : []),
        ['bare', startCeiling('bare-query', backend.url, casesFile)],
        ['fastify', startCeiling('bare-fastify', backend.url, casesFile)],
        ...(name === 'postgres' ? [['pgjson', startCeiling('pg-json', backend.url, casesFile)] as [ServerKind, Promise<Server>]] : []),
        ['static', startCeiling('static', backend.url, casesFile)],
      ];
      const started = await timed('starting servers', () => Promise.allSettled(starting.map(([, s]) => s)));
      started.forEach((r, i) => r.status === 'fulfilled' && servers.push({ kind: starting[i][0], server: r.value }));
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      const bare = servers.find((s) => s.kind === 'bare')!.server;
      const fastify = servers.find((s) => s.kind === 'fastify')!.server;
      const pgjson = servers.find((s) => s.kind === 'pgjson')?.server;
      for (const c of cases) {
        for (const [ceiling, server] of [['bare-query', bare], ['bare-fastify', fastify]] as const) {
          const same = isDeepStrictEqual(JSON.parse(await fetchText(server.url + c.path)), JSON.parse(bodies[c.path]));
          if (!same) throw new Error(`the ${ceiling} ceiling answers ${c.name} differently from the API; it must run the same query`);
        }
        // (c) must answer the API's very bytes (key order, number and string formatting included).
        if (pgjson && (await fetchText(pgjson.url + c.path)) !== bodies[c.path]) {
          throw new Error(`the pg-json ceiling answers ${c.name} with other bytes than the API:\n${(await fetchText(pgjson.url + c.path)).slice(0, 400)}\n${bodies[c.path].slice(0, 400)}`);
        }
      }
      for (const [index, c] of cases.entries()) {
        say(`-- ${c.name} (${round(Buffer.byteLength(bodies[c.path]) / 1024, 1)} KiB)`);
        // The first listing page is also asked for compressed: the same API server, with Accept-Encoding. (f) runs
        // for one product alone, the case where a request's fixed cost is most of it (and it keeps --quick short).
        const kinds = servers.filter((s) => s.kind !== 'fastify' || !c.list);
        if (o.compressed && index === 0 && c.list) {
          for (const [at, kind] of (['api-br', 'api-gzip'] as const).entries()) {
            kinds.splice(1 + at, 0, { kind, server: api });
            const sent = await wireBytes(api.url + c.path, { ...auth, 'accept-encoding': CODINGS[kind]! });
            if (sent.coding !== CODINGS[kind]) throw new Error(`the API answered Accept-Encoding: ${CODINGS[kind]} with ${sent.coding}`);
            wire.set(`${name} ${kind}`, sent.bytes);
          }
        }
        const runs = new Map<ServerKind, LoadResult[]>();
        for (let r = 0; r < o.rounds; r++) {
          for (const { kind, server } of kinds) {
            const from = monotonicUs();
            const coding = CODINGS[kind];
            const result = await timed('loads', () => runLoad({
              url: server.url + c.path, headers: kind.startsWith('api') ? { ...auth, ...(coding ? { 'accept-encoding': coding } : {}) } : {}, connections: o.connections, pid: server.child.pid,
              dbUrl: name === 'postgres' ? backend.url : undefined,
              duration: o.duration, warmup: r === 0 ? o.warmup : rewarmup,
            }));
            if (result.non2xx || result.errors) say(`  warning: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
            runs.set(kind, [...(runs.get(kind) ?? []), result]);
            if (kind === 'api') apiWindows.push({ fromUs: from, toUs: monotonicUs() });
            loads.push(loadavg()[0]);
            say(`  ${kind.padEnd(8)} round ${r + 1}: ${String(round(result.rps)).padStart(7)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms  ${round(result.cpuMicrosPerRequest)} µs CPU/req${result.dbCpuMicrosPerRequest == null ? '' : ` + ${round(result.dbCpuMicrosPerRequest)} µs PostgreSQL`}  (load average ${round(loadavg()[0], 1)})`);
          }
        }
        for (const [kind, results] of runs) measurements.push({ backend: name, case: c.name, server: kind, result: combine(results) });
        if (o.perf) {
          for (const { kind, server } of kinds.filter((k) => k.kind === 'api' || k.kind === 'bare' || k.kind === 'fastify')) {
            const file = join(work, `${name}-${kind}.perf`);
            const recording = recordPerf(server.child.pid!, file);
            let result: LoadResult;
            try {
              result = await timed('loads under perf', () => runLoad({
                url: server.url + c.path, headers: kind === 'api' ? auth : {}, connections: o.connections, pid: server.child.pid, duration: o.duration, warmup: rewarmup,
              }));
            } finally {
              await recording.stop();
            }
            perfSplits.push({ backend: name, case: c.name, server: kind, cpuMicros: result.cpuMicrosPerRequest, byDso: perfShares(file, 'dso'), bySymbol: perfShares(file, 'dso,sym') });
            rmSync(file, { force: true });
            say(`  ${kind.padEnd(8)} under perf: ${round(result.cpuMicrosPerRequest)} µs CPU/req`);
          }
        }
      }
      apiRss.set(name, api.peakRssMb());
      for (const { kind, server } of servers) serverRss.set(`${name} ${kind}`, server.peakRssMb());
      say('-- POST /oauth/token');
      const issued = await timed('loads', () => runLoad({ url: `${api.url}/oauth/token`, method: 'POST', headers: formHeaders, body: form, connections: o.connections, duration: o.duration * o.rounds, warmup: o.warmup, pid: api.child.pid }));
      tokens.push({ backend: name, result: issued });
      say(`  ${round(issued.rps)} tokens/s  p50 ${issued.p50} ms  p99 ${issued.p99} ms${issued.non2xx ? `  (${issued.non2xx} non-2xx!)` : ''}`);
    } finally {
      await timed('stopping', () => Promise.all(servers.map(({ server }) => server.stop())));
    }
    if (profileDir) {
      for (const f of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
        // Only the samples taken while the read cases loaded the API: not its start-up (module loading,
        // schema compiling), the cursor walk or the token endpoint.
        profiles.push(`#### ${name}, the read cases under load\n\n${summarizeProfile(join(profileDir, f), 25, apiWindows)}`);
        rmSync(join(profileDir, f));
      }
    }
  }

  // From this process's start: the module loading before runCore counts too.
  const wall = { total: process.uptime(), spent };
  const report = await renderReport(o, { measurements, seeds, tokens, sizes, wire, apiRss, serverRss, caseNames, profiles, perfSplits, loads, failures, wall, rewarmup });
  say(`\n${report}`);
  const stamp = new Date().toISOString().slice(0, 16).replace(':', '');
  const out = o.out ?? join('bench', 'results', `core-${stamp}${o.quick ? '-quick' : ''}${o.czech ? '-czech' : ''}.md`);
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, report);
  say(`\nWritten to ${out}`);
}

interface Collected {
  measurements: Measurement[];
  seeds: Seeding[];
  tokens: Array<{ backend: string; result: LoadResult }>;
  sizes: Map<string, number>;
  /** Bytes of the compressed first page, by "<backend> <kind>". */
  wire: Map<string, number>;
  apiRss: Map<string, number>;
  /** Peak RSS of every server, by "<backend> <kind>". */
  serverRss: Map<string, number>;
  caseNames: string[];
  profiles: string[];
  perfSplits: PerfSplit[];
  /** 1-minute load averages seen during the run. */
  loads: number[];
  /** Backends whose measuring failed, with why. */
  failures: string[];
  /** Seconds from the process's start to the report, and by phase. */
  wall: { total: number; spent: Map<string, number> };
  rewarmup: number;
}

const BINARIES = ['kernel', 'node', 'JIT', 'libc', 'sqlite', 'other'] as const;

/**
 * `--perf`: each server's CPU per answer split by binary, and per case the native and kernel symbols where the API
 * spends the most over its nearest ceiling ((f) where it ran, else (b)), in µs per answer.
 */
function perfSection(c: Collected): string[] {
  if (!c.perfSplits.length) return [];
  const micros = (split: PerfSplit, share: number) => round(split.cpuMicros * share, 1);
  const rows = c.perfSplits.map((split) => {
    const byBinary = new Map<string, number>();
    for (const [dso, share] of split.byDso) byBinary.set(binaryOf(dso), (byBinary.get(binaryOf(dso)) ?? 0) + share);
    return [split.case, split.backend, split.server, round(split.cpuMicros), ...BINARIES.map((b) => micros(split, byBinary.get(b) ?? 0))];
  });
  const lines = [
    '', '## Where the CPU per answer goes (`--perf`)', '',
    'One more load of each server after its case\'s rounds, under `perf record -e cpu-clock -F 999` (not counted above; perf slows what it samples). ' +
      'µs per answer by binary: the kernel; `node` is Node\'s own code with V8\'s runtime, builtins and garbage collector; `JIT` the JavaScript V8 compiled (not named by symbol); ' +
      '`sqlite` the better-sqlite3 addon with SQLite.',
    '',
    table(['case', 'backend', 'server', 'µs CPU/req under perf', ...BINARIES], rows),
  ];
  for (const split of c.perfSplits.filter((s) => s.server === 'api')) {
    const ceiling = c.perfSplits.find((s) => s.case === split.case && s.backend === split.backend && s.server === 'fastify')
      ?? c.perfSplits.find((s) => s.case === split.case && s.backend === split.backend && s.server === 'bare');
    if (!ceiling) continue;
    const names = new Set([...split.bySymbol.keys(), ...ceiling.bySymbol.keys()].filter((n) => !n.startsWith('[JIT]')));
    const more = [...names]
      .map((n) => [n, micros(split, split.bySymbol.get(n) ?? 0), micros(ceiling, ceiling.bySymbol.get(n) ?? 0)] as const)
      .map(([n, api, other]) => [n, api, other, round(api - other, 1)] as const)
      .sort((a, b) => b[3] - a[3])
      .slice(0, 12);
    const label = ceiling.server === 'fastify' ? '(f)' : '(b)';
    lines.push('', `### ${split.case}, ${split.backend}: the native and kernel symbols where the API spends most over ${label}`, '',
      `API ${round(split.cpuMicros)} µs per answer, ${label} ${round(ceiling.cpuMicros)} µs; the JIT's ${micros(split, split.byDso.get('[JIT]') ?? 0)} µs against ${micros(ceiling, ceiling.byDso.get('[JIT]') ?? 0)} µs.`,
      '', table(['binary and symbol', 'API µs', `${label} µs`, 'more'], more.map((r) => [`\`${r[0]}\``, r[1], r[2], r[3]])));
  }
  return lines;
}

/** The first page compressed at the API's levels beside the same page plain: bytes and CPU per answer. */
function compressedSection(o: CoreOptions, c: Collected, get: (backend: string, name: string, server: ServerKind) => LoadResult | undefined): string[] {
  const first = c.caseNames[0];
  const rows = o.backends.flatMap((backend) => {
    const plain = get(backend, first, 'api');
    if (!plain || !get(backend, first, 'api-br')) return [];
    return (['api', 'api-br', 'api-gzip'] as const).flatMap((kind) => {
      const r = get(backend, first, kind);
      if (!r) return [];
      // A starved machine can leave a 2-second round without a single answer: no figure rather than a wrong one.
      const cpu = r.total > 0 ? round(r.cpuMicrosPerRequest) : '–';
      const bytes = kind === 'api' ? c.sizes.get(first) ?? 0 : c.wire.get(`${backend} ${kind}`) ?? 0;
      const coding = kind === 'api' ? 'identity' : kind === 'api-br' ? `br (quality ${BROTLI_QUALITY})` : `gzip (level ${GZIP_LEVEL})`;
      return [[backend, coding, bytes, `${round((bytes / (c.sizes.get(first) ?? 1)) * 100, 1)} %`, round(r.rps), r.p50, r.p99, cpu, kind === 'api' || r.total === 0 || plain.total === 0 ? '–' : round(r.cpuMicrosPerRequest - plain.cpuMicrosPerRequest)]];
    });
  });
  if (rows.length === 0) return [];
  return [
    `### Compressed JSON pages: ${first}`,
    '',
    'The API\'s page asked for with `Accept-Encoding: br` and `gzip` (the levels of `src/http/compression.ts`), in the same rounds as the servers ' +
      'above: bytes on the wire and the server\'s CPU per answer beside the same page uncompressed. `npm run bench:compression` times the levels themselves.',
    '',
    table(['backend', 'coding', 'bytes per answer', 'of plain', 'API req/s', 'p50', 'p99', 'µs CPU/req', 'µs CPU added by compressing'], rows),
    '',
  ];
}

/** What Fastify alone costs: (f) against (b), and the API against (f), for the cases (f) ran (one product). */
function fastifySection(o: CoreOptions, c: Collected, get: (backend: string, name: string, server: ServerKind) => LoadResult | undefined): string[] {
  const rows = c.caseNames.flatMap((name) =>
    o.backends.flatMap((backend) => {
      const [api, bare, fastify] = (['api', 'bare', 'fastify'] as const).map((k) => get(backend, name, k));
      if (!api || !bare || !fastify) return [];
      const share = (x: LoadResult, of: LoadResult) => [`${round((x.rps / of.rps) * 100)} %`, `${round((of.cpuMicrosPerRequest / x.cpuMicrosPerRequest) * 100)} %`];
      return [[name, backend, round(fastify.rps), round(fastify.cpuMicrosPerRequest), ...share(fastify, bare), ...share(api, fastify)]];
    }),
  );
  if (rows.length === 0) return [];
  return [
    '### The framework alone: ceiling (f)',
    '',
    '(b)\'s answers served by Fastify with one route and nothing else, in the same rounds: what Fastify costs per request against bare ' +
      '`node:http`, and what the API\'s own checks (token, scopes, rate limit, validation, ETag, compression negotiation) cost on top of it.',
    '',
    table(['case', 'backend', '(f) req/s', '(f) µs CPU/req', '(f) req/s % of (b)', '(f) CPU efficiency % of (b)', 'API req/s % of (f)', 'API CPU efficiency % of (f)'], rows),
    '',
  ];
}

/**
 * Ceiling (b)'s CPU per answer for one product in the docs' reference run (bench/results/core-2026-11-28T1316.md):
 * the same bare server on another day's machine tells how much slower this one is. On a machine several times
 * slower (seen: 6x, 2026-11-28 afternoon) the API's share of (b) drops too, so a run's ratios compare with runs on
 * a machine of the same speed only.
 */
const REFERENCE = { run: 'core-2026-11-28T1316', bareItemMicros: { sqlite: 19, postgres: 49 } } as const;

/** A warning when (b) took much more CPU per answer for one product than in the reference run. */
function machineSpeed(o: CoreOptions, get: (backend: string, name: string, server: ServerKind) => LoadResult | undefined, caseNames: string[]): string[] {
  const item = caseNames.find((n) => n.startsWith('single item'));
  const slower = o.backends.flatMap((backend) => {
    const bare = item ? get(backend, item, 'bare') : undefined;
    if (!bare) return [];
    const factor = bare.cpuMicrosPerRequest / REFERENCE.bareItemMicros[backend];
    return factor >= 1.5 ? [`${backend} ${round(bare.cpuMicrosPerRequest)} µs against ${REFERENCE.bareItemMicros[backend]} (${round(factor, 1)}×)`] : [];
  });
  if (!slower.length) return [];
  return ['', `**A slow machine**: ceiling (b) took more CPU per answer for one product than in the reference run ${REFERENCE.run}: ${slower.join('; ')}. ` +
    'The API\'s shares of (b) fall on such a machine too; compare these figures with runs on a machine of the same speed only.'];
}

async function renderReport(o: CoreOptions, c: Collected): Promise<string> {
  const get = (backend: string, name: string, server: ServerKind) => c.measurements.find((m) => m.backend === backend && m.case === name && m.server === server)?.result;
  const rows: Array<Array<string | number>> = [];
  for (const name of c.caseNames) {
    for (const backend of o.backends) {
      const api = get(backend, name, 'api');
      const bare = get(backend, name, 'bare');
      const stat = get(backend, name, 'static');
      const info = get(backend, name, 'api-info');
      const pgjson = get(backend, name, 'pgjson');
      if (!api || !bare || !stat) continue;
      rows.push([
        name, backend, round((c.sizes.get(name) ?? 0) / 1024, 1),
        round(api.rps), api.p50, api.p99, round(api.cpuMicrosPerRequest),
        round(bare.rps), bare.p50, bare.p99, round(bare.cpuMicrosPerRequest),
        `**${round((api.rps / bare.rps) * 100)} %**`, `**${round((bare.cpuMicrosPerRequest / api.cpuMicrosPerRequest) * 100)} %**`,
        ...(pgjson
          ? [round(pgjson.rps), round(pgjson.cpuMicrosPerRequest), `**${round((api.rps / pgjson.rps) * 100)} %**`, `**${round((pgjson.cpuMicrosPerRequest / api.cpuMicrosPerRequest) * 100)} %**`]
          : ['–', '–', '–', '–']),
        round(stat.rps), stat.p50, stat.p99,
        ...(o.infoLogs ? [info ? round(info.rps) : '–', info ? round(info.cpuMicrosPerRequest) : '–'] : []),
      ]);
    }
  }
  const pgVersion = o.backends.includes('postgres') ? await postgresVersion().catch(() => '?') : undefined;
  return [
    `# Core benchmark${o.quick ? ' (--quick)' : ''}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${round(totalmem() / 2 ** 30)} GiB; Node ${process.version}` +
      `${pgVersion ? `; PostgreSQL ${pgVersion}` : ''}. ${o.products} products (seeded by \`store-api seed\`${o.czech ? `, then \`--czech\`: \`${CZECH_TEXT}\`` : ''}), ` +
      `autocannon with ${o.connections} connections in its own process, on the same cores as the server (and, for PostgreSQL, the database). ` +
      `Each case alternates between the servers ${o.rounds} time${o.rounds > 1 ? 's' : ''}, ${o.duration} s measured each time after a warm-up ` +
      `(${o.warmup} s the first time, ${c.rewarmup} s after); req/s is the median of the per-second counts, then the median over the rounds, ` +
      'and so are the latencies (ms). The API runs with `LOG_LEVEL=warn` and a rate limit too high to bite ' +
      '(the bucket is still taken on every request). (b) is a bare `node:http` server running the same SQL through the same driver with ' +
      '`JSON.stringify`; (c), on PostgreSQL only, is a bare `node:http` server running the same SQL wrapped so that PostgreSQL builds the JSON ' +
      '(`row_to_json` per row joined by `string_agg`, as PostgREST does; checked to answer the API\'s bytes exactly); (a) answers the same bytes from memory; ' +
      '(f), for one product, serves (b)\'s answers through Fastify with nothing else (one route, no hooks, plugins, schemas or logger).',
    '',
    `1-minute load average during the run: min ${round(Math.min(...c.loads), 1)}, median ${round(median(c.loads), 1)}, max ${round(Math.max(...c.loads), 1)} ` +
      `(the server and the load generator alone make about 2; more means other work shared the ${cpus().length} cores).`,
    `Wall time ${round(c.wall.total / 60, 1)} min from the start of the process: ${[...c.wall.spent].map(([phase, s]) => `${phase} ${round(s)} s`).join(', ')}` +
      `${o.seedCache ? ' (seeded stores from the seed cache where there was one, `--seed-cache`)' : ''}.`,
    ...(o.profile ? ['', '**Profiled run** (`--cpu-prof`): API figures are slowed by the profiler and not comparable.'] : []),
    ...machineSpeed(o, get, c.caseNames),
    ...(c.failures.length ? ['', `**Failed**, so missing from the tables: ${c.failures.join('; ')}.`] : []),
    '',
    '## Reads',
    '',
    table(['case', 'backend', 'KiB', 'API req/s', 'p50', 'p99', 'µs CPU/req', '(b) req/s', 'p50', 'p99', 'µs CPU/req', 'API req/s % of (b)', 'API CPU efficiency % of (b)', '(c) req/s', '(c) µs CPU/req', 'API req/s % of (c)', 'API CPU efficiency % of (c)', '(a) req/s', 'p50', 'p99', ...(o.infoLogs ? ['API, info logs: req/s', 'µs CPU/req'] : [])], rows),
    '',
    ...(o.backends.includes('postgres') ? [
      '### PostgreSQL: CPU per answer of the server and of the database',
      '',
      'The database backends\' CPU time of the run\'s own database (from `/proc`, over the same seconds): what (c) moves from Node into PostgreSQL.',
      '',
      table(['case', 'API µs Node + DB', '(b) µs Node + DB', '(c) µs Node + DB', 'API total % of (b)', 'API total % of (c)'], c.caseNames.flatMap((name) => {
        const [api, bare, pgjson] = (['api', 'bare', 'pgjson'] as const).map((k) => get('postgres', name, k));
        if (!api || !bare || !pgjson) return [];
        const cell = (r: LoadResult) => `${round(r.cpuMicrosPerRequest)} + ${round(r.dbCpuMicrosPerRequest ?? NaN)}`;
        const total = (r: LoadResult) => r.cpuMicrosPerRequest + (r.dbCpuMicrosPerRequest ?? NaN);
        return [[name, cell(api), cell(bare), cell(pgjson), `${round((total(bare) / total(api)) * 100)} %`, `${round((total(pgjson) / total(api)) * 100)} %`]];
      })),
      '',
    ] : []),
    '"CPU efficiency" is (b)\'s server CPU time per answer over the API\'s: unlike req/s it does not move when other work shares the machine. ' +
      'For PostgreSQL it counts the Node.js process only, not the database\'s.',
    '',
    ...fastifySection(o, c, get),
    ...compressedSection(o, c, get),
    '## Tokens: `POST /oauth/token`',
    '',
    table(['backend', 'tokens/s', 'p50', 'p99', 'µs CPU/token', 'non-2xx'], c.tokens.map((t) => [t.backend, round(t.result.rps), t.result.p50, t.result.p99, round(t.result.cpuMicrosPerRequest), t.result.non2xx])),
    '',
    `## Seeding: \`store-api seed --products ${o.products}\``,
    '',
    table(['backend', 'seconds', 'peak RSS MB', 'database MB', 'seeded'], c.seeds.map((s) => [s.backend, s.seconds, s.peakRssMb, s.sizeMb, s.cached ? `${s.seededAt.slice(0, 16).replace('T', ' ')} UTC, kept in the seed cache (this run copied it)` : 'by this run'])),
    '',
    `Peak RSS of the API server during the reads: ${[...c.apiRss].map(([b, mb]) => `${b} ${mb} MB`).join(', ')}` +
      ` (every server: ${[...c.serverRss].map(([k, mb]) => `${k} ${mb} MB`).join(', ')}).`,
    ...(c.profiles.length ? ['', '## Where the API spends its time (self time, `--cpu-prof`)', '', ...c.profiles] : []),
    ...perfSection(c),
    '',
  ].join('\n');
}
