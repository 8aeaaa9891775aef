// `npm run bench:compression [-- --products 1000 --n 40]`: bytes and server CPU per answer with and without
// compression (JSON pages of 50 and 1000 products, a CSV export of every product), what a 304 costs beside
// the 200 of the same page, and the compressors' levels timed on those very bodies. The server runs in this
// process on a seeded SQLite store; the client is a child process (so that its own work is not counted) making
// sequential requests over one keep-alive connection on loopback. Writes bench/results/compression-<date>.md.
// See docs/benchmarks.md, "Compression and conditional requests".
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { buildApp } from '../src/app.ts';
import { createCredential } from '../src/auth/credentials.service.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { openStore } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { BROTLI_QUALITY, GZIP_LEVEL } from '../src/http/compression.ts';
import { entityTag } from '../src/http/conditional.ts';
import { seedStore } from '../src/seed/seed.ts';
import { numberOption, parseArgs } from './lib/args.ts';

const { options: args } = parseArgs(process.argv.slice(2));
const PRODUCTS = numberOption(args, 'products', 1000);
const N = numberOption(args, 'n', 40);
const say = (line: string) => process.stdout.write(`${line}\n`);
const loadAtStart = loadavg().map((l) => l.toFixed(2)).join(', ');

/** The client: N sequential GETs on one keep-alive connection, every byte read (not decoded), totals printed as JSON. */
const CLIENT = `
const http = require('node:http');
const { url, headers, n } = JSON.parse(process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let bytes = 0, statuses = {}, encoding;
const one = () => new Promise((resolve, reject) => {
  http.get(url, { headers, agent }, (res) => {
    statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
    encoding = res.headers['content-encoding'] || 'identity';
    res.on('data', (c) => (bytes += c.length));
    res.on('end', resolve);
    res.on('error', reject);
  }).on('error', reject);
});
(async () => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await one();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  agent.destroy();
  process.stdout.write(JSON.stringify({ bytes, ms, statuses, encoding }));
})().catch((err) => { console.error(err); process.exit(1); });
`;

function client(url: string, headers: Record<string, string>, n: number): Promise<{ bytes: number; ms: number; statuses: Record<string, number>; encoding: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CLIENT, JSON.stringify({ url, headers, n })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited with ${code}`))));
  });
}

interface Row {
  what: string;
  coding: string;
  status: string;
  bytes: number;
  cpuMs: number;
  cpuMinMs: number;
  wallMs: number;
}

const dir = mkdtempSync(join(tmpdir(), 'store-api-bench-compression-'));
const url = `sqlite:${join(dir, 'store.db')}`;
const store = openStore(url);
await migrateToLatest(store.db);
say(`seeding ${PRODUCTS} products into ${url}`);
await seedStore(store, { products: PRODUCTS, orders: 0, seed: 1 });
const config = loadConfig({ DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN: 'bench-admin-token-0123456789abcdefghijkl', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000' }, {});
const ctx = await createContext(config, store);
const app = await buildApp(ctx, { logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const issued = await createCredential(store.db, ctx.hashKey, 'bench compression', ['products:read']);
const tokenAnswer = await app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret } });
const auth = { authorization: `Bearer ${tokenAnswer.json<{ access_token: string }>().access_token}` };

const rows: Row[] = [];
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/**
 * One case: a warm-up, then ROUNDS runs of N requests; the server's CPU (user + system, GC threads included)
 * per answer, the least and the median of the rounds (other work on the machine and a collection landing in
 * one round inflate some rounds; the least is the closest to the answer's own cost).
 */
async function measure(what: string, path: string, headers: Record<string, string>, n = N): Promise<Row> {
  await client(`${base}${path}`, { ...auth, ...headers }, 3);
  const cpuMs: number[] = [];
  const wallMs: number[] = [];
  let run = await client(`${base}${path}`, { ...auth, ...headers }, 1);
  for (let r = 0; r < ROUNDS; r++) {
    const cpu = process.cpuUsage();
    run = await client(`${base}${path}`, { ...auth, ...headers }, n);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000 / n);
    wallMs.push(run.ms / n);
  }
  const row: Row = {
    what,
    coding: run.encoding,
    status: Object.keys(run.statuses).join('/'),
    bytes: Math.round(run.bytes / n),
    cpuMs: median(cpuMs),
    cpuMinMs: Math.min(...cpuMs),
    wallMs: median(wallMs),
  };
  rows.push(row);
  say(`${what.padEnd(34)} ${row.coding.padEnd(8)} ${row.status} ${String(row.bytes).padStart(9)} B  cpu ${row.cpuMinMs.toFixed(2).padStart(7)} / ${row.cpuMs.toFixed(2).padStart(7)} ms  wall ${row.wallMs.toFixed(2).padStart(7)} ms`);
  return row;
}

const pages = { '50 products (JSON page)': '/api/v2/products?limit=50', '1000 products (JSON page)': '/api/v2/products?limit=1000' };
for (const [what, path] of Object.entries(pages)) {
  for (const coding of ['identity', 'gzip', 'br']) await measure(what, path, { 'accept-encoding': coding });
}
const csvN = Math.max(5, Math.round(N / 4));
for (const coding of ['identity', 'gzip', 'br']) await measure(`all ${PRODUCTS} products (CSV export)`, '/api/v2/products?format=csv', { 'accept-encoding': coding }, csvN);
for (const [what, path] of Object.entries(pages)) {
  const etag = (await fetch(`${base}${path}`, { headers: auth })).headers.get('etag')!;
  await measure(`${what}, If-None-Match`, path, { 'if-none-match': etag });
}

// The compressors alone, on the bodies themselves: the levels one could choose, CPU per answer and bytes.
const bodies: Record<string, Buffer> = {};
for (const [what, path] of Object.entries({ ...pages, [`CSV export (${PRODUCTS} products)`]: '/api/v2/products?format=csv' })) {
  bodies[what] = Buffer.from(await (await fetch(`${base}${path}`, { headers: { ...auth, 'accept-encoding': 'identity' } })).arrayBuffer());
}
const levels: Array<[string, (b: Buffer) => Buffer | string]> = [
  // What the ETag itself costs (SHA-1 of the body, conditional.ts), beside the compressors.
  ['ETag', (b) => entityTag(b)],
  ...[1, 4, 6, 9].map((level): [string, (b: Buffer) => Buffer | string] => [`gzip ${level}`, (b) => zlib.gzipSync(b, { level })]),
  ...[1, 4, 5, 6, 11].map((q): [string, (b: Buffer) => Buffer | string] => [`br ${q}`, (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } })]),
];
const levelRows: Array<{ body: string; plain: number; level: string; bytes: number; cpuMs: number }> = [];
for (const [body, plain] of Object.entries(bodies)) {
  for (const [level, compress] of levels) {
    const times = level === 'br 11' ? 3 : 10;
    compress(plain);
    const cpu = process.cpuUsage();
    let out: Buffer | string = '';
    for (let i = 0; i < times; i++) out = compress(plain);
    const used = process.cpuUsage(cpu);
    levelRows.push({ body, plain: plain.length, level, bytes: out.length, cpuMs: (used.user + used.system) / 1000 / times });
    say(`${body.padEnd(34)} ${level.padEnd(6)} ${String(out.length).padStart(9)} B of ${plain.length}  cpu ${((used.user + used.system) / 1000 / times).toFixed(2)} ms`);
  }
}

await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const date = new Date().toISOString().slice(0, 10);
const load = loadavg().map((l) => l.toFixed(2)).join(', ');
const kb = (b: number) => (b / 1024).toFixed(1);
const md = [
  `# Compression and conditional requests, ${date}`,
  '',
  `\`npm run bench:compression -- --products ${PRODUCTS} --n ${N}\` on SQLite; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'};`,
  `load average (1, 5, 15 min) at the start ${loadAtStart}, at the end ${load} (the machine was shared with other work: wall times are noisy, CPU times less so).`,
  `Levels in use: gzip ${GZIP_LEVEL}, brotli quality ${BROTLI_QUALITY}. CPU is the server process's user + system time per answer`,
  '(query, serialization, ETag, compression, HTTP, garbage collection), least and median of 5 rounds of N sequential requests on one keep-alive loopback connection.',
  '',
  '| answer | coding | status | bytes on the wire | server CPU ms, least | median | wall ms, median |',
  '|---|---|---|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.what} | ${r.coding} | ${r.status} | ${r.bytes} (${kb(r.bytes)} KiB) | ${r.cpuMinMs.toFixed(2)} | ${r.cpuMs.toFixed(2)} | ${r.wallMs.toFixed(2)} |`),
  '',
  'A `304` runs the same query and serialization as the `200` (the ETag is a hash of the serialized answer),',
  'so it saves the bytes and the writing of them, not the work of making the answer.',
  '',
  '## The compressors alone, on the same bodies (CPU ms per answer, bytes)',
  '',
  '| body | plain bytes | level | bytes | ratio | CPU ms |',
  '|---|---:|---|---:|---:|---:|',
  ...levelRows.map((r) => `| ${r.body} | ${r.plain} | ${r.level} | ${r.bytes} | ${((100 * r.bytes) / r.plain).toFixed(1)} % | ${r.cpuMs.toFixed(2)} |`),
  '',
];
const out = join(import.meta.dirname, 'results', `compression-${date}.md`);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(out, md.join('\n'));
say(`written ${out}`);
