// `npm run soak -- --minutes N [--db sqlite|postgres]`: a long mixed load on `store-api serve` (a child process,
// so that its memory and file descriptors are its own) with a webhook receiver on 127.0.0.1.
// Load: lists, cursor walks, single items, whole CSV/XLSX exports, the changes feed, token requests (within
// the token rate limits), admin writes (each fanned out to a webhook delivery) and admin reads.
// Every few seconds: the server's RSS, open file descriptors (/proc/<pid>), PostgreSQL connections of its
// database, and the requests since the last sample. Exits 1 on any 5xx, unexpected status, transport error,
// error-level log line, server exit, lost delivery, or growth that does not level off (the last third of the
// samples after warm-up against the middle third: RSS by its lower quartile, descriptors and connections by
// their mean; and RSS at most --rss-bound above its first sample after warm-up). Stops by itself; Ctrl-C
// cleans up too.
// Options: --minutes 5 --db sqlite --concurrency 8 --sample 5 --products 2000 --orders 500
//          --rss-slack 24 (MB) --rss-bound 200 (MB) --fd-slack 16. See docs/operations.md, "Fuzzing and soak".
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { numberOption, parseArgs } from './lib/args.ts';
import { onAbort } from './lib/cleanup.ts';
import { freePort } from './lib/ports.ts';
import { createBenchDatabase, dropBenchDatabase } from './lib/postgres.ts';
import { runMeasured } from './lib/processes.ts';
import { round, table } from './lib/report.ts';

const CLI = join(import.meta.dirname, '..', 'bin', 'store-api.js');
const ADMIN = `soak-admin-${randomBytes(16).toString('hex')}`;
const COLLECTIONS = ['products', 'categories', 'brands', 'product-parameters', 'product-filters', 'orders'] as const;
const say = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { options } = parseArgs(process.argv.slice(2));
const minutes = numberOption(options, 'minutes', 5);
const dialect = options.get('db') ?? 'sqlite';
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`--db must be sqlite or postgres, got "${dialect}"`);
const concurrency = Math.round(numberOption(options, 'concurrency', 8));
// At least 24 samples in a run, so that the thirds compared have several each.
const sampleMs = Math.min(numberOption(options, 'sample', 5), (minutes * 60) / 24) * 1000;
const products = Math.round(numberOption(options, 'products', 2000));
const orders = Math.round(numberOption(options, 'orders', 500));
const rssSlackMb = numberOption(options, 'rss-slack', 24);
const rssBoundMb = numberOption(options, 'rss-bound', 200);
const fdSlack = numberOption(options, 'fd-slack', 16);

// ---------------------------------------------------------------- the server, its database, the receiver

interface Database { url: string; name?: string; drop(): Promise<void> }

async function database(): Promise<Database> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-soak-'));
    return { url: `sqlite:${join(dir, 'store.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const created = await createBenchDatabase();
  return { url: created.url, name: created.name, drop: () => dropBenchDatabase(created.name) };
}

interface Server { url: string; child: ChildProcess; errors: string[]; exited(): string | undefined; stop(): Promise<void> }

/** `store-api serve` as an operator runs it; its log lines at error level and above are kept as failures. */
async function serve(databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), ADMIN_TOKEN: ADMIN, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.once('exit', onAbort(() => child.kill('SIGKILL')));
  const errors: string[] = [];
  let tail = '';
  const read = (chunk: Buffer) => {
    const lines = (tail + chunk.toString()).split('\n');
    tail = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) {
        if (/error|exception/i.test(line)) errors.push(line.slice(0, 500));
        continue;
      }
      try {
        if ((JSON.parse(line) as { level?: number }).level! >= 50) errors.push(line.slice(0, 500));
      } catch {
        errors.push(line.slice(0, 500));
      }
    }
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before listening:\n${errors.join('\n')}${tail}`);
    if (Date.now() > deadline) throw new Error('the server did not listen within 60 s');
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
  }
  return {
    url,
    child,
    errors,
    exited: () => (child.exitCode !== null || child.signalCode !== null ? `the server exited (${child.exitCode ?? child.signalCode})` : undefined),
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    }),
  };
}

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps only the distinct webhook-ids it got. */
function receiver(): Promise<{ url: string; ids: Set<string>; close(): Promise<void> }> {
  const ids = new Set<string>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.add(String(req.headers['webhook-id']));
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    resolve({ url: `http://127.0.0.1:${port}/hooks`, ids, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) });
  }));
}

// ---------------------------------------------------------------- requests and their outcomes

interface Kind { count: number; latencies: number[] }
const kinds = new Map<string, Kind>();
const failures: string[] = [];
let failureCount = 0;
let requests = 0;

function fail(what: string): void {
  failureCount++;
  if (failures.length < 20) failures.push(what);
}

/** One request; any status outside `expect` (2xx by default) and any transport error or timeout is a failure. */
async function call(kind: string, base: string, method: string, path: string, auth: string | undefined, body?: unknown, expect?: number[]): Promise<{ status: number; json?: unknown }> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = auth;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
    const buffer = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - started;
    requests++;
    const k = kinds.get(kind) ?? { count: 0, latencies: [] };
    k.count++;
    k.latencies.push(ms);
    kinds.set(kind, k);
    const ok = expect ? expect.includes(res.status) : res.status >= 200 && res.status < 300;
    if (!ok) fail(`${kind}: ${method} ${path} → ${res.status} ${buffer.toString('utf8', 0, 300)}`);
    const json = String(res.headers.get('content-type')).startsWith('application/json') ? (JSON.parse(buffer.toString()) as unknown) : undefined;
    return { status: res.status, json };
  } catch (err) {
    requests++;
    fail(`${kind}: ${method} ${path} → ${(err as Error).name}: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`);
    return { status: 0 };
  }
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

// ---------------------------------------------------------------- the run

const db = await database();
onAbort(() => db.drop());
const hooks = await receiver();
onAbort(() => hooks.close());
let server: Server | undefined;
let pgClient: pg.Client | undefined;
let exitCode = 0;
try {
  say(`soak: ${dialect}, ${minutes} min, ${concurrency} workers; seeding ${products} products and ${orders} orders …`);
  await runMeasured(process.execPath, [CLI, '--database', db.url, 'seed', '--products', String(products), '--orders', String(orders), '--json']);
  server = await serve(db.url);
  const base = server.url;
  const pid = server.child.pid!;
  const admin = `Bearer ${ADMIN}`;
  if (db.name) {
    const client = new pg.Client({ connectionString: db.url });
    // Dropping the database (at the end, or on Ctrl-C) ends this connection: that is no failure of the soak.
    client.on('error', () => {});
    await client.connect();
    onAbort(() => client.end());
    pgClient = client;
  }

  // Credentials: one reader per worker (exports are limited per credential), four to mint tokens with.
  const credential = async (name: string) => (await call('setup', base, 'POST', '/admin/api/credentials', admin, { name, scopes: ['products:read', 'categories:read', 'brands:read', 'product-parameters:read', 'product-filters:read', 'orders:read', 'changes:read'] })).json as { clientId: string; clientSecret: string };
  const token = async (c: { clientId: string; clientSecret: string }, kind = 'setup') =>
    ((await call(kind, base, 'POST', '/oauth/token', undefined, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret })).json as { access_token?: string } | undefined)?.access_token;
  const readers: string[] = [];
  for (let i = 0; i < concurrency; i++) readers.push(`Bearer ${await token(await credential(`soak reader ${i}`))}`);
  const minters = await Promise.all([0, 1, 2, 3].map((i) => credential(`soak minter ${i}`)));
  const hook = (await call('setup', base, 'POST', '/admin/api/webhooks', admin, { url: hooks.url, events: ['*'] })).json as { id: number };
  if (failureCount) throw new Error(`setup failed:\n${failures.join('\n')}`);

  // What the load reads: every collection's ids and sorts, from the API itself.
  const doc = (await (await fetch(`${base}/api/v2/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters?: Array<{ name: string; schema: { enum?: string[] } }> } }> };
  const sorts = new Map(COLLECTIONS.map((c) => [c, doc.paths[`/api/v2/${c}`].get!.parameters!.find((p) => p.name === 'sort')!.schema.enum!]));
  const ids = new Map<string, number[]>();
  for (const c of COLLECTIONS) {
    const page = (await call('setup', base, 'GET', `/api/v2/${c}?limit=1000`, readers[0])).json as { data: Array<{ id: number }> };
    ids.set(c, page.data.map((d) => d.id));
  }
  const productIds = ids.get('products')!;
  let head = 0;

  // Writes the receiver must see: each acknowledged write records one event, delivered once.
  let writes = 0;
  const soakBrands: number[] = [];
  const write = async (): Promise<void> => {
    const roll = Math.random();
    if (roll < 0.5) {
      const r = await call('admin write', base, 'PATCH', `/admin/api/products/${pick(productIds)}`, admin, { stock: Math.floor(Math.random() * 1000) });
      if (r.status === 200) writes++;
    } else if (roll < 0.75 || soakBrands.length < 5) {
      const r = await call('admin write', base, 'POST', '/admin/api/brands', admin, { name: `Soak brand ${randomBytes(6).toString('hex')}` });
      if (r.status === 201) {
        writes++;
        soakBrands.push((r.json as { id: number }).id);
      }
    } else {
      // Deletes keep the brands table the size it was: what grows is the event log, as in production.
      const r = await call('admin write', base, 'DELETE', `/admin/api/brands/${soakBrands.shift()!}`, admin);
      if (r.status === 204) writes++;
    }
  };

  const actions: Array<[number, (reader: string) => Promise<unknown>]> = [
    [25, (t) => { const c = pick(COLLECTIONS); return call('list', base, 'GET', `/api/v2/${c}?limit=${pick([10, 50, 100, 500])}&sort=${encodeURIComponent(pick(sorts.get(c)!))}${Math.random() < 0.2 ? '&includeTotal=true' : ''}`, t); }],
    [8, async (t) => {
      const c = pick(COLLECTIONS);
      let path: string | undefined = `/api/v2/${c}?limit=100&sort=${encodeURIComponent(pick(sorts.get(c)!))}`;
      for (let page = 0; path && page < 10; page++) {
        const body = (await call('cursor walk', base, 'GET', path, t)).json as { pagination?: { nextCursor: string | null } } | undefined;
        const next = body?.pagination?.nextCursor;
        path = next ? `/api/v2/${c}?cursor=${encodeURIComponent(next)}` : undefined;
      }
    }],
    [25, (t) => { const c = pick(COLLECTIONS); return call('item', base, 'GET', `/api/v2/${c}/${pick(ids.get(c)!)}`, t); }],
    [3, (t) => call('export csv', base, 'GET', `/api/v2/${pick(COLLECTIONS)}?format=csv`, t)],
    [1, (t) => call('export xlsx', base, 'GET', `/api/v2/${pick(['brands', 'categories', 'orders'])}?format=xlsx`, t)],
    [6, async (t) => {
      const body = (await call('changes', base, 'GET', `/api/v2/changes?after=${Math.max(0, head - 200)}&limit=100`, t)).json as { pagination?: { nextCursor: string } } | undefined;
      head = Math.max(head, Number(body?.pagination?.nextCursor ?? 0));
    }],
    [14, () => write()],
    [3, () => call('admin read', base, 'GET', `/admin/api/webhooks/${hook.id}/deliveries?limit=20`, admin)],
  ];
  const total = actions.reduce((n, [w]) => n + w, 0);
  const act = (reader: string) => {
    let roll = Math.random() * total;
    for (const [w, f] of actions) if ((roll -= w) < 0) return f(reader);
    return actions[0][1](reader);
  };

  // ---------------------------------------------------------------- load and samples
  interface Sample { t: number; rssMb: number; fds: number; pgConnections?: number; rps: number; failures: number; delivered: number }
  const samples: Sample[] = [];
  const started = Date.now();
  const until = started + minutes * 60_000;
  let stopping = false;
  const stop = () => { stopping = true; };
  const forgetStop = onAbort(stop);
  let lastRequests = 0;
  let lastAt = started;
  const sample = async () => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssMb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    const pgConnections = pgClient ? Number((await pgClient.query('select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db.name])).rows[0].n) : undefined;
    const now = Date.now();
    const s: Sample = { t: (now - started) / 1000, rssMb, fds, pgConnections, rps: (requests - lastRequests) / ((now - lastAt) / 1000), failures: failureCount, delivered: hooks.ids.size };
    lastRequests = requests;
    lastAt = now;
    samples.push(s);
    say(`  ${round(s.t)} s  rss ${round(rssMb, 1)} MB  fds ${fds}${pgConnections === undefined ? '' : `  pg ${pgConnections}`}  ${round(s.rps)} req/s  failures ${failureCount}  delivered ${hooks.ids.size}/${writes}`);
  };
  const sampler = (async () => {
    while (!stopping) {
      await sleep(Math.max(0, sampleMs - ((Date.now() - started) % sampleMs)));
      if (stopping) break;
      if (server.exited()) {
        fail(server.exited()!);
        stop();
        break;
      }
      await sample().catch((err: unknown) => fail(`sampling: ${(err as Error).message}`));
      if (Date.now() >= until) stop();
    }
  })();
  // Token requests, paced under the token endpoint's limits (per credential and per address).
  const minting = (async () => {
    for (let i = 0; !stopping; i++) {
      await token(minters[i % minters.length], 'token');
      await sleep(700);
    }
  })();
  say(`load for ${minutes} min; a sample every ${round(sampleMs / 1000, 1)} s`);
  await Promise.all([sampler, minting, ...readers.map(async (reader) => {
    while (!stopping) await act(reader);
  })]);
  forgetStop();

  // Every acknowledged write's delivery must arrive.
  const loadEnded = Date.now();
  while (hooks.ids.size < writes && Date.now() - loadEnded < 60_000 && !server.exited()) await sleep(200);

  // ---------------------------------------------------------------- verdict
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  // RSS saws up and down with garbage collection (by 100 MB on PostgreSQL): a third that ends on a peak says
  // nothing. What a leak raises is the floor, so RSS compares the lower quartile of each third.
  const floor = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 4)] ?? 0;
  const warm = samples.slice(Math.ceil(samples.length / 5));
  const third = Math.floor(warm.length / 3);
  const growth = (pickValue: (s: Sample) => number, level: (xs: number[]) => number) => {
    const values = warm.map(pickValue);
    const middle = level(values.slice(third, 2 * third));
    const last = level(values.slice(values.length - third));
    return { first: values[0], middle, last, growth: last - middle, max: Math.max(...values) };
  };
  const verdicts: string[] = [];
  if (third < 2) verdicts.push(`too few samples after warm-up (${warm.length}) to judge growth`);
  const rss = growth((s) => s.rssMb, floor);
  const fds = growth((s) => s.fds, mean);
  const pgc = pgClient ? growth((s) => s.pgConnections ?? 0, mean) : undefined;
  if (rss.growth > Math.max(rssSlackMb, rss.middle * 0.05)) verdicts.push(`RSS does not level off: lower quartile of the last third ${round(rss.last, 1)} MB against the middle third's ${round(rss.middle, 1)} MB`);
  if (rss.max - rss.first > rssBoundMb) verdicts.push(`RSS grew ${round(rss.max - rss.first, 1)} MB after warm-up (bound ${rssBoundMb} MB)`);
  if (fds.growth > fdSlack) verdicts.push(`file descriptors do not level off: last third ${round(fds.last, 1)} against middle third ${round(fds.middle, 1)}`);
  if (pgc && pgc.growth > fdSlack) verdicts.push(`PostgreSQL connections do not level off: last third ${round(pgc.last, 1)} against middle third ${round(pgc.middle, 1)}`);
  if (hooks.ids.size < writes) verdicts.push(`${writes - hooks.ids.size} of ${writes} acknowledged writes were not delivered within 60 s`);
  if (failureCount) verdicts.push(`${failureCount} failed requests`);
  if (server.errors.length) verdicts.push(`${server.errors.length} error-level log lines`);
  if (server.exited()) verdicts.push(server.exited()!);

  // At most 40 rows: every k-th sample, and the last.
  const step = Math.ceil(samples.length / 40);
  const shown = samples.filter((_, i) => i % step === 0 || i === samples.length - 1);
  say(`\nSamples (${dialect}; the first ${samples.length - warm.length} are warm-up):\n`);
  say(table(['s', 'RSS MB', 'fds', ...(pgClient ? ['pg conns'] : []), 'req/s', 'failures', 'delivered'],
    shown.map((s) => [round(s.t), round(s.rssMb, 1), s.fds, ...(pgClient ? [s.pgConnections ?? 0] : []), round(s.rps), s.failures, s.delivered])));
  const seconds = (loadEnded - started) / 1000;
  say(`\nRequests (${round(requests / seconds)} req/s over ${round(seconds)} s):\n`);
  const p = (xs: number[], q: number) => round(xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0, 1);
  say(table(['kind', 'requests', 'p50 ms', 'p99 ms', 'max ms'], [...kinds].filter(([k]) => k !== 'setup').map(([k, v]) => {
    const sorted = v.latencies.sort((a, b) => a - b);
    return [k, v.count, p(sorted, 0.5), p(sorted, 0.99), round(sorted.at(-1) ?? 0, 1)];
  })));
  say(`\nSummary: RSS after warm-up ${round(rss.first, 1)} MB; lower quartile of the middle third ${round(rss.middle, 1)} MB, of the last third ${round(rss.last, 1)} MB (max ${round(rss.max, 1)});`);
  say(`fds middle ${round(fds.middle, 1)}, last ${round(fds.last, 1)} (max ${fds.max})${pgc ? `; PostgreSQL connections middle ${round(pgc.middle, 1)}, last ${round(pgc.last, 1)} (max ${pgc.max})` : ''};`);
  say(`writes ${writes}, deliveries ${hooks.ids.size}; failed requests ${failureCount}; error-level log lines ${server.errors.length}.`);
  for (const f of failures) say(`  failure: ${f}`);
  for (const e of server.errors.slice(0, 10)) say(`  server log: ${e}`);
  if (verdicts.length) {
    say(`\nFAIL (${dialect}):\n${verdicts.map((v) => `  - ${v}`).join('\n')}`);
    exitCode = 1;
  } else say(`\nPASS (${dialect}): no failure, and memory, file descriptors and connections level off.`);
} catch (err) {
  say(`\nFAIL: ${(err as Error).stack ?? String(err)}`);
  exitCode = 1;
} finally {
  await pgClient?.end().catch(() => {});
  await server?.stop();
  await hooks.close();
  await db.drop();
}
process.exit(exitCode);
