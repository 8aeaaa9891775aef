// `npm run bench:side-by-side -- --base <commit> [--options]`: the API of another commit and of this checkout,
// both serving at once, each on its own copy of the same seeded store, loaded in turn round after round. Where two
// `npm run bench` runs minutes apart differ by more than the change being measured (on a shared 2-core machine
// they have, by up to 29 points), the rounds of one run see the same machine, and the median of their per-round
// ratios is what a change is judged by. CPU time per answer (from /proc) is the figure that compares.
//
// Options: --base <commit> (required: checked out into a temporary worktree, its app built there), --path
// '/api/v2/products?limit=100' (several separated by spaces; `{cursor-after:N}` in one stands for the cursor after the
// first N items of its collection: '/api/v2/products?limit=100&cursor={cursor-after:18000}'), --backends sqlite,postgres, --products 20000,
// --rounds 14, --duration 2 (seconds measured per round and side), --connections 50, --header 'name: value' (sent
// with every measured request, e.g. 'accept-encoding: gzip'), --sql '<statement>' (run on
// both copies before the servers start: e.g. names with diacritics), --out bench/results/side-by-side-<date>T<hhmm>.md.
// Both checkouts must read the same migrations (the store is seeded by this one's).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { parseArgs, numberOption } from './lib/args.ts';
import { onAbort } from './lib/cleanup.ts';
import { runLoad } from './lib/load.ts';
import { freePort } from './lib/ports.ts';
import { admin, copyDatabase, createBenchDatabase, dropBenchDatabase } from './lib/postgres.ts';
import { runMeasured, startServer, type Server } from './lib/processes.ts';
import { median } from './lib/report.ts';

const { options } = parseArgs(process.argv.slice(2));
const base = options.get('base');
if (!base) {
  process.stderr.write('--base <commit> is required: the commit to compare this checkout with\n');
  process.exit(2);
}
// Separated by spaces: a path may hold commas (`status=paid,shipped`), never a space.
const paths = (options.get('path') ?? '/api/v2/products?limit=100').split(/\s+/).filter(Boolean);
const backends = (options.get('backends') ?? 'sqlite,postgres').split(',') as Array<'sqlite' | 'postgres'>;
const products = numberOption(options, 'products', 20_000);
const rounds = numberOption(options, 'rounds', 14);
const duration = numberOption(options, 'duration', 2);
const connections = numberOption(options, 'connections', 50);
const extraSql = options.get('sql');
/** A header sent with every measured request (`--header 'accept-encoding: gzip'`); the bodies compared are fetched without it. */
const extraHeader = ((header) => {
  if (header === undefined) return {};
  const at = header.indexOf(':');
  if (at < 1) {
    process.stderr.write(`--header ${header}: expected 'name: value'\n`);
    process.exit(2);
  }
  return { [header.slice(0, at).trim().toLowerCase()]: header.slice(at + 1).trim() };
})(options.get('header'));
const startedAt = new Date().toISOString();
const out = options.get('out') ?? join(import.meta.dirname, 'results', `side-by-side-${startedAt.slice(0, 10)}T${startedAt.slice(11, 16).replace(':', '')}.md`);
const here = resolve(import.meta.dirname, '..');
const NODE = process.execPath;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdefghij';
const say = (line: string) => process.stdout.write(`${line}\n`);
const git = (...args: string[]) => execFileSync('git', ['-C', here, ...args], { encoding: 'utf8' }).trim();

// Before anything is made: a commit that does not exist ends the run here.
let baseCommit: string;
try {
  baseCommit = execFileSync('git', ['-C', here, 'rev-parse', '--short', '--verify', '--quiet', `${base}^{commit}`], { encoding: 'utf8' }).trim();
} catch {
  process.stderr.write(`--base ${base}: no such commit in ${here}\n`);
  process.exit(2);
}
const newCommit = `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with uncommitted changes' : ''}`;
const work = mkdtempSync(join(tmpdir(), 'store-api-side-by-side-'));
const worktree = join(work, 'base');
const databases: string[] = [];
const servers: Server[] = [];
const cleanUp = async () => {
  await Promise.allSettled(servers.map((s) => s.stop()));
  for (const name of databases) await dropBenchDatabase(name).catch(() => undefined);
  try {
    git('worktree', 'remove', '--force', worktree);
  } catch {
    // Not created, or already gone.
  }
  rmSync(work, { recursive: true, force: true });
};
const forget = onAbort(() => cleanUp());

interface Side { name: 'base' | 'new'; dir: string }
const sides: Side[] = [{ name: 'base', dir: worktree }, { name: 'new', dir: here }];
interface Round { backend: string; path: string; round: number; side: 'base' | 'new'; rps: number; cpu: number; load: number }
const measured: Round[] = [];

const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

async function startApi(side: Side, url: string): Promise<Server> {
  const port = await freePort();
  return startServer(`api (${side.name})`, NODE, [join(side.dir, 'bin/store-api.js'), '--database', url, 'serve'], {
    HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', ADMIN_TOKEN,
    RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000',
  }, `http://127.0.0.1:${port}/healthz`);
}

/**
 * The path with each `{cursor-after:N}` replaced by the cursor of the position after the first N items of its
 * collection in the default order (walked in pages of at most 1 000 on `server`): both copies of the store share
 * the hashing key that signs it.
 */
async function withCursors(path: string, server: string, token: string): Promise<string> {
  const collection = path.split('?')[0];
  let resolved = path;
  for (const [placeholder, n] of [...path.matchAll(/\{cursor-after:(\d+)\}/g)].map((m) => [m[0], Number(m[1])] as const)) {
    let cursor: string | undefined;
    for (let left = n; left > 0; left -= 1000) {
      const res = await fetch(`${server}${collection}?limit=${Math.min(left, 1000)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
      const page = (await res.json()) as { pagination?: { nextCursor: string | null } };
      cursor = page.pagination?.nextCursor ?? undefined;
      if (!cursor) throw new Error(`${placeholder}: ${collection} has fewer than ${n} items (status ${res.status})`);
    }
    resolved = resolved.replace(placeholder, encodeURIComponent(cursor!));
  }
  return resolved;
}

try {
  say(`checking out ${baseCommit} and building both apps …`);
  git('worktree', 'add', '--detach', worktree, base);
  symlinkSync(join(here, 'node_modules'), join(worktree, 'node_modules'));
  // A commit from before scripts/build-app.mjs runs its sources through tsx.
  for (const side of sides) if (existsSync(join(side.dir, 'scripts/build-app.mjs'))) await runMeasured(NODE, [join(side.dir, 'scripts/build-app.mjs')]);
  const cli = (url: string, ...args: string[]) => runMeasured(NODE, [join(here, 'bin/store-api.js'), '--database', url, ...args]);
  const createCredential = async (url: string) =>
    JSON.parse((await cli(url, 'credentials', 'create', '--name', 'bench', '--scopes', 'all', '--json')).stdout) as { clientId: string; clientSecret: string };
  for (const backend of backends) {
    // One store seeded by this checkout, with the credential, then copied for each side: the same rows, and
    // neither side's writes (tokens, usage) reach the other's.
    const urls: string[] = [];
    let credential: { clientId: string; clientSecret: string };
    if (backend === 'sqlite') {
      const file = join(work, 'seeded.db');
      say(`seeding ${products} products on SQLite …`);
      await cli(`sqlite:${file}`, 'seed', '--products', String(products));
      credential = await createCredential(`sqlite:${file}`);
      for (const side of sides) {
        const copy = join(work, `${side.name}.db`);
        copyFileSync(file, copy);
        if (extraSql) execFileSync('sqlite3', [copy, extraSql]);
        urls.push(`sqlite:${copy}`);
      }
    } else {
      const seeded = await createBenchDatabase();
      databases.push(seeded.name);
      say(`seeding ${products} products on PostgreSQL …`);
      await cli(seeded.url, 'seed', '--products', String(products));
      credential = await createCredential(seeded.url);
      for (const side of sides) {
        const name = `${seeded.name}_${side.name}`;
        await admin((c) => copyDatabase(c, name, seeded.name));
        databases.push(name);
        const url = new URL(seeded.url);
        url.pathname = `/${name}`;
        const c = new pg.Client({ connectionString: url.toString() });
        await c.connect();
        try {
          if (extraSql) await c.query(extraSql);
          // Planner statistics, as a running store has them (autovacuum may be off).
          await c.query('vacuum analyze');
        } finally {
          await c.end();
        }
        urls.push(url.toString());
      }
    }
    const running = await Promise.all(sides.map((side, i) => startApi(side, urls[i])));
    servers.push(...running);
    const tokens = await Promise.all(running.map(async (server, i) => {
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=${credential.clientId}&client_secret=${encodeURIComponent(credential.clientSecret)}`,
      });
      if (res.status !== 200) throw new Error(`token from ${sides[i].name}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { access_token: string }).access_token;
    }));
    for (const given of paths) {
      const path = await withCursors(given, running[1].url, tokens[1]);
      // Both must answer the same bytes, or the comparison is of two different things.
      const bodies = await Promise.all(running.map(async (s, i) => (await fetch(s.url + path, { headers: { authorization: `Bearer ${tokens[i]}` } })).text()));
      if (bodies[0] !== bodies[1]) throw new Error(`${path}: the two servers answer differently on ${backend}:\n${bodies[0].slice(0, 300)}\n${bodies[1].slice(0, 300)}`);
      say(`${backend} ${path === given ? path : `${given} (${path.length} characters)`}`);
      for (let round = 1; round <= rounds; round++) {
        // Alternating which side goes first, so that a trend over the run touches both alike.
        const order = round % 2 ? [0, 1] : [1, 0];
        for (const i of order) {
          const r = await runLoad({ url: running[i].url + path, headers: { ...extraHeader, authorization: `Bearer ${tokens[i]}` }, connections, duration, warmup: round === 1 ? 2 : 0.5, pid: running[i].child.pid });
          if (r.non2xx || r.errors) throw new Error(`${sides[i].name}: ${r.non2xx} answers not 2xx, ${r.errors} errors`);
          measured.push({ backend, path: given, round, side: sides[i].name, rps: r.rps, cpu: r.cpuMicrosPerRequest, load: loadAverage() });
        }
        const [b, n] = (['base', 'new'] as const).map((s) => measured.find((m) => m.backend === backend && m.path === given && m.round === round && m.side === s)!);
        say(`  round ${round}: base ${b.rps} req/s ${b.cpu.toFixed(0)} µs, new ${n.rps} req/s ${n.cpu.toFixed(0)} µs, load ${n.load}`);
      }
    }
    await Promise.all(running.map((s) => s.stop()));
    servers.length = 0;
  }
} finally {
  await cleanUp();
  forget();
}

const lines = [
  `# Side by side: ${baseCommit} (base) against ${newCommit} (new), ${startedAt.slice(0, 16).replace('T', ' ')} UTC`,
  '',
  `\`npm run bench:side-by-side -- ${process.argv.slice(2).map((a) => (/^[\w./:,=-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}\`: both APIs serving at once, each on its own copy of one store of ${products} products seeded by the new checkout${extraSql ? ` and changed by \`${extraSql}\`` : ''}; ${rounds} rounds of ${duration} s, ${connections} connections, the side that goes first alternating. CPU is the server process's time per answer (every thread, from /proc); the ratio is new over base within each round, and its median is the figure to read.`,
  '',
  '| backend | path | base req/s | base µs CPU | new req/s | new µs CPU | new/base CPU, median of rounds (range) | load average |',
  '|---|---|---:|---:|---:|---:|---|---|',
];
for (const backend of backends) {
  for (const path of paths) {
    const of = (side: 'base' | 'new') => measured.filter((m) => m.backend === backend && m.path === path && m.side === side);
    const [b, n] = [of('base'), of('new')];
    if (!b.length) continue;
    const ratios = b.map((x) => n.find((y) => y.round === x.round)!.cpu / x.cpu);
    const loads = [...b, ...n].map((m) => m.load);
    lines.push(`| ${backend} | \`${path}\` | ${median(b.map((m) => m.rps))} | ${median(b.map((m) => m.cpu)).toFixed(0)} | ${median(n.map((m) => m.rps))} | ${median(n.map((m) => m.cpu)).toFixed(0)} | **${median(ratios).toFixed(3)}** (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${Math.min(...loads)}–${Math.max(...loads)} |`);
  }
}
lines.push('', 'Each round:', '', '| backend | path | round | side | req/s | µs CPU |', '|---|---|---:|---|---:|---:|');
for (const m of measured) lines.push(`| ${m.backend} | \`${m.path}\` | ${m.round} | ${m.side} | ${m.rps} | ${m.cpu.toFixed(0)} |`);
writeFileSync(out, `${lines.join('\n')}\n`);
say(`written to ${out}`);
process.exit(0);
