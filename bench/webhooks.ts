// `npm run bench:webhooks [-- --options]`: webhook delivery on SQLite and PostgreSQL, against `store-api serve`
// as an operator runs it and a receiver on 127.0.0.1 that answers 200 at once.
//  1. Throughput and delay: N writes through the admin API (8 at a time); events/s from the first write to the
//     last 2xx, and p50/p99 of the delay from each write's transaction (its event's occurredAt) to its 2xx.
//  2. Server CPU time per write, without and with its delivery (robust against other load on the machine).
//  3. Read API under delivery: autocannon on /api/v2/products?limit=100 alone, beside 100 writes/s with no
//     subscription, and beside 100 writes/s each delivered (the last two differ by the delivery work only).
// Options: --writes 1000 --rate 100 --duration 10 --connections 20 --backends sqlite,postgres --products 2000 --burst-only --timeline --profile DIR.
// See docs/benchmarks.md, "Webhooks".
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberOption, parseArgs } from './lib/args.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { freePort } from './lib/ports.ts';
import { createBenchDatabase, dropBenchDatabase } from './lib/postgres.ts';
import { runMeasured, startServer, type Server } from './lib/processes.ts';
import { monotonicUs, summarizeProfile, type ProfileWindow } from './lib/profile.ts';
import { round, table } from './lib/report.ts';

const CLI = join(import.meta.dirname, '..', 'bin', 'store-api.js');
const ADMIN = 'bench-webhooks-admin-0123456789abcdefg';
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { options } = parseArgs(process.argv.slice(2));
const writes = numberOption(options, 'writes', 1000);
const rate = numberOption(options, 'rate', 100);
const duration = numberOption(options, 'duration', 10);
const connections = numberOption(options, 'connections', 20);
const products = numberOption(options, 'products', 2000);
const backends = (options.get('backends') ?? 'sqlite,postgres').split(',');
// --burst-only: the 1 000-write burst alone (parts 2 and 3 skipped), for iterating on delivery latency.
const burstOnly = options.has('burst-only');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Answers 200 at once and notes when each event arrived, by webhook-id (a retry would count once). */
interface Arrival { at: number; occurredAt: number; itemId: number }

function receiver(): Promise<{ url: string; arrivals: Map<string, Arrival>; close(): Promise<void> }> {
  const arrivals = new Map<string, Arrival>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200).end();
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { timestamp: string; data: { id: number } };
      const id = String(req.headers['webhook-id']);
      if (!arrivals.has(id)) arrivals.set(id, { at, occurredAt: Date.parse(body.timestamp), itemId: body.data.id });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/hook`, arrivals, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) });
    }),
  );
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function request(base: string, method: string, path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(`${base}${path}`, { method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** When the admin API answered each write (just after its commit), by brand id. */
const answered = new Map<number, number>();

async function brand(base: string, name: string): Promise<void> {
  const res = await request(base, 'POST', '/admin/api/brands', { name });
  if (res.status !== 201) throw new Error(`write failed: ${res.status} ${res.body}`);
  answered.set((JSON.parse(res.body) as { id: number }).id, Date.now());
}

/** Delays in ms, sorted: from each write's transaction start (occurredAt), and from its answer (≈ commit; negative when the webhook came first). */
function delays(arrivals: Arrival[]): { fromWrite: number[]; fromAnswer: number[] } {
  const sort = (xs: number[]) => xs.sort((a, b) => a - b);
  return {
    fromWrite: sort(arrivals.map((a) => a.at - a.occurredAt)),
    fromAnswer: sort(arrivals.filter((a) => answered.has(a.itemId)).map((a) => a.at - answered.get(a.itemId)!)),
  };
}

/** Writes `rate` brands per second for `seconds`, without waiting for one before the next is due. */
async function pacedWrites(base: string, tag: string, seconds: number): Promise<number> {
  const pending: Array<Promise<void>> = [];
  const started = performance.now();
  for (let i = 0; performance.now() - started < seconds * 1000; i++) {
    pending.push(brand(base, `${tag} ${i}`));
    const next = started + ((i + 1) * 1000) / rate;
    await sleep(Math.max(0, next - performance.now()));
  }
  await Promise.all(pending);
  return pending.length;
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux; 0 elsewhere). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** Committed and rolled-back transactions of a PostgreSQL database so far. */
async function transactions(url: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

interface Backend {
  url: string;
  drop(): Promise<void>;
}

async function database(kind: string): Promise<Backend> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-bench-webhooks-'));
    return { url: `sqlite:${join(dir, 'store.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const created = await createBenchDatabase();
  return { url: created.url, drop: () => dropBenchDatabase(created.name) };
}

/** The burst's span on the profile clock, by backend (for --profile). */
const bursts = new Map<string, ProfileWindow & { pid: number }>();

/** With --profile DIR: the server's samples taken during the burst alone (not its start-up, the seed or the later parts). */
function summarizeBurst(kind: string): void {
  const profileDir = options.get('profile');
  const burst = bursts.get(kind);
  if (!profileDir || !burst) return;
  // The main thread's profile (thread 0; tsx's loader runs in a worker with a profile of its own).
  const file = readdirSync(profileDir).find((f) => f.includes(`.${burst.pid}.0.`) && f.endsWith('.cpuprofile'));
  if (file) say(`\n${kind} server during the burst (self time, --cpu-prof, ${file}):\n\n${summarizeProfile(join(profileDir, file), 30, [burst])}`);
}

const rows: Array<Array<string | number>> = [];
const reads: Array<Array<string | number>> = [];
const cpu: Array<Array<string | number>> = [];
for (const kind of backends) {
  const db = await database(kind);
  let server: Server | undefined;
  const hooks = await receiver();
  try {
    say(`\n${kind}: seeding ${products} products …`);
    await runMeasured(process.execPath, [CLI, '--database', db.url, 'seed', '--products', String(products), '--orders', '0', '--json']);
    const credential = JSON.parse((await runMeasured(process.execPath, [CLI, '--database', db.url, 'credentials', 'create', '--name', 'bench', '--scopes', 'products:read', '--json'])).stdout) as { clientId: string; clientSecret: string };
    const port = await freePort();
    // --profile DIR: the server under `node --cpu-prof`, its profile written to DIR when it stops.
    const profile = options.get('profile');
    server = await startServer(`${kind} server`, process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), CLI, 'serve'], {
      DATABASE_URL: db.url, PORT: String(port), ADMIN_TOKEN: ADMIN, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: 'warn',
    }, `http://127.0.0.1:${port}/healthz`);
    const base = server.url;
    const token = JSON.parse((await request(base, 'POST', '/oauth/token', { grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret }, {})).body).access_token as string;

    // 1. Throughput and delay.
    const sub = JSON.parse((await request(base, 'POST', '/admin/api/webhooks', { url: hooks.url, events: ['brand.*'] })).body) as { id: number };
    // Warm-up (JIT, connections, caches): 200 delivered writes, not measured.
    answered.clear();
    await pacedWrites(base, 'Warm-up', 2);
    for (const deadline = Date.now() + 30_000; hooks.arrivals.size < answered.size && Date.now() < deadline;) await sleep(10);
    hooks.arrivals.clear();
    say(`${kind}: ${writes} writes, 8 at a time, each delivered …`);
    const xactsBefore = options.has('timeline') && kind === 'postgres' ? await transactions(db.url) : 0;
    const burst: ProfileWindow = { fromUs: monotonicUs(), toUs: 0 };
    const started = Date.now();
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < writes) await brand(base, `Bench brand ${next++}`);
    }));
    const written = Date.now();
    while (hooks.arrivals.size < writes) {
      if (Date.now() - written > 60_000) throw new Error(`only ${hooks.arrivals.size} of ${writes} deliveries arrived`);
      await sleep(5);
    }
    burst.toUs = monotonicUs();
    bursts.set(kind, { ...burst, pid: server.child.pid! });
    const arrivals = [...hooks.arrivals.values()];
    const last = Math.max(...arrivals.map((a) => a.at));
    const d = delays(arrivals);
    rows.push([kind, writes, round(writes / ((written - started) / 1000)), round(writes / ((last - started) / 1000)), percentile(d.fromAnswer, 50), percentile(d.fromAnswer, 99), percentile(d.fromWrite, 50), percentile(d.fromWrite, 99), d.fromWrite[d.fromWrite.length - 1]]);
    say(`  events/s ${rows.at(-1)![3]}; commit→2xx p50 ${rows.at(-1)![4]} ms, p99 ${rows.at(-1)![5]} ms`);
    if (options.has('timeline') && kind === 'postgres') {
      // Transactions of the whole burst (statistics reach pg_stat_database within PostgreSQL's 10 s idle flush),
      // less one per write: what the dispatcher's passes cost the database per delivery, whatever the load.
      await sleep(11_000);
      const xacts = (await transactions(db.url)) - xactsBefore;
      say(`  database transactions: ${xacts} in all, ${round((xacts - writes) / writes, 2)} per delivery besides its write's`);
    }
    if (options.has('timeline')) {
      // Writes answered and deliveries arrived per 250 ms from the first write: where delivery falls behind.
      const bucket = (t: number) => Math.floor((t - started) / 250);
      const counts = new Map<number, [number, number]>();
      for (const t of answered.values()) if (t >= started) (counts.get(bucket(t)) ?? counts.set(bucket(t), [0, 0]).get(bucket(t))!)[0]++;
      for (const a of arrivals) (counts.get(bucket(a.at)) ?? counts.set(bucket(a.at), [0, 0]).get(bucket(a.at))!)[1]++;
      say(`  per 250 ms (written/delivered): ${[...counts].sort((x, y) => x[0] - y[0]).map(([b, [w, d]]) => `${b * 250}:${w}/${d}`).join(' ')}`);
    }

    if (burstOnly) continue;
    // 2. The server's CPU time per write, without and with its delivery: what delivery costs the process
    // that also serves the API (CPU time is not skewed by other work on the machine, as throughput is).
    const pid = server.child.pid!;
    const perWrite = async (tag: string): Promise<number> => {
      hooks.arrivals.clear();
      const before = cpuMs(pid);
      const n = await pacedWrites(base, tag, 5);
      const deadline = Date.now() + 60_000;
      while (tag === 'Cpu delivered' && hooks.arrivals.size < n && Date.now() < deadline) await sleep(10);
      await sleep(300);
      return (cpuMs(pid) - before) / n;
    };
    await request(base, 'PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: false });
    const cpuPlain = await perWrite('Cpu plain');
    await request(base, 'PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: true });
    const cpuDelivered = await perWrite('Cpu delivered');
    cpu.push([kind, round(cpuPlain, 2), round(cpuDelivered, 2), round(cpuDelivered - cpuPlain, 2), `${round(((cpuDelivered - cpuPlain) * rate) / 10, 1)} %`]);

    // 3. The read API alone, beside writes, and beside writes that are delivered.
    const load = (): Promise<LoadResult> => runLoad({ url: `${base}/api/v2/products?limit=100`, headers: { authorization: `Bearer ${token}` }, connections, duration, warmup: 2 });
    await request(base, 'PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: false });
    say(`${kind}: read API alone …`);
    const alone = await load();
    say(`${kind}: read API beside ${rate} writes/s, no subscription …`);
    const [plain] = await Promise.all([load(), pacedWrites(base, 'Plain', duration + 2)]);
    await request(base, 'PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: true });
    hooks.arrivals.clear();
    say(`${kind}: read API beside ${rate} writes/s, each delivered …`);
    const [delivered, sent] = await Promise.all([load(), pacedWrites(base, 'Delivered', duration + 2)]);
    const paced = Date.now();
    while (hooks.arrivals.size < sent) {
      if (Date.now() - paced > 60_000) throw new Error(`only ${hooks.arrivals.size} of ${sent} deliveries arrived`);
      await sleep(10);
    }
    const lag = delays([...hooks.arrivals.values()]).fromAnswer;
    reads.push([kind, round(alone.rps), round(plain.rps), round(delivered.rps), `${round((1 - delivered.rps / plain.rps) * 100, 1)} %`, `${round((1 - delivered.rps / alone.rps) * 100, 1)} %`, round(percentile(lag, 99), 1)]);
  } finally {
    await server?.stop();
    await hooks.close();
    await db.drop();
    summarizeBurst(kind);
  }
}

say('\nDelivery: writes through the admin API, each event delivered to a receiver on 127.0.0.1 answering 200 at once.');
say('commit→2xx: from the admin API\'s answer to the write (just after its commit; negative when the webhook came first) to the receiver');
say('having the request; write→2xx: from the start of the write\'s transaction (the event\'s occurredAt), queueing behind other writes included.\n');
say(table(['backend', 'writes', 'writes/s', 'events/s delivered', 'commit→2xx p50 ms', 'commit→2xx p99 ms', 'write→2xx p50 ms', 'write→2xx p99 ms', 'max ms'], rows));
say(`\nServer CPU time per write at ${rate} writes/s (from /proc), without a subscription and with each event delivered.\n`);
say(table(['backend', 'CPU ms per write', 'CPU ms per write + delivery', 'CPU ms per delivery', `of one core at ${rate} events/s`], cpu));
say(`\nRead API (${connections} connections, ${duration} s, GET /api/v2/products?limit=100) beside ${rate} writes/s.\n`);
say(table(['backend', 'alone req/s', `+ ${rate} writes/s req/s`, '+ writes delivered req/s', 'cost of delivery', 'cost of writes + delivery', 'commit→2xx p99 ms'], reads));
agent.destroy();
