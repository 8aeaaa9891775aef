// Seeded stores kept between runs of the core benchmark (`--seed-cache`, on by default with --quick): seeding
// 20 000 products took 12–110 s a backend on a busy 2-core machine, as long as the measuring itself. A run takes a
// copy (SQLite: the file; PostgreSQL: `CREATE DATABASE … TEMPLATE`), so every run still reads a store no earlier
// run has written to. The key holds what the seeded rows depend on: the seed's options, the schema (migrations),
// the generator, the resource definitions and how credentials are stored (the copy carries the run's credential).
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onAbort } from './cleanup.ts';
import { admin, copyDatabase } from './postgres.ts';

export const SEED_CACHE_DIR = process.env.BENCH_SEED_CACHE_DIR ?? join(tmpdir(), 'store-api-bench-seed-cache');
/** Seeded stores kept per backend (the least recently used go first). */
const KEPT = 3;
/** What the seeded rows and the credential depend on, besides the seed's options. */
const SOURCES = ['src/db/migrations', 'src/db/migrate.ts', 'src/db/tables.ts', 'src/seed', 'src/modules', 'src/resources', 'src/auth/credentials.service.ts'];

export interface SeedRecord {
  /** The seeding that made the cached store: its time, peak RSS and the database's size. */
  seconds: number;
  peakRssMb: number;
  sizeMb: number;
  seededAt: string;
  /** A credential with every scope, made in the store after seeding. */
  credential: { clientId: string; clientSecret: string };
}

export interface CachedSeed {
  record: SeedRecord;
  /** SQLite: the file to copy. */
  file?: string;
  /** PostgreSQL: the database to copy (CREATE DATABASE … TEMPLATE). */
  template?: string;
}

type Kind = 'sqlite' | 'postgres';

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).sort().flatMap((f) => filesUnder(join(path, f)));
}

/** The cache key of a seeding: its options and the content of every source it depends on. */
export function seedCacheKey(options: { products: number; orders: number; seed: number }): string {
  const hash = createHash('sha256').update(JSON.stringify(options));
  for (const file of SOURCES.flatMap(filesUnder)) hash.update(file).update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

const recordFile = (kind: Kind, key: string) => join(SEED_CACHE_DIR, `${kind}-${key}.json`);
const sqliteFile = (key: string) => join(SEED_CACHE_DIR, `sqlite-${key}.db`);
const templateName = (key: string) => `store_api_seed_cache_${key}`;

/** The cached store of this key, if there is one (and its data is still there). */
export async function findSeed(kind: Kind, key: string): Promise<CachedSeed | undefined> {
  const path = recordFile(kind, key);
  if (!existsSync(path)) return undefined;
  const record = JSON.parse(readFileSync(path, 'utf8')) as SeedRecord;
  if (kind === 'sqlite') {
    if (!existsSync(sqliteFile(key))) return undefined;
    touch(path);
    return { record, file: sqliteFile(key) };
  }
  const present = await admin(async (c) => (await c.query('select 1 from pg_database where datname = $1', [templateName(key)])).rowCount === 1);
  if (!present) return undefined;
  touch(path);
  return { record, template: templateName(key) };
}

const touch = (path: string) => utimesSync(path, new Date(), new Date());

/** Keeps a freshly seeded store (not in use: no server running on it) under its key. */
export async function keepSeed(kind: Kind, key: string, url: string, record: SeedRecord): Promise<void> {
  mkdirSync(SEED_CACHE_DIR, { recursive: true });
  const partial = `${randomBytes(4).toString('hex')}-partial`;
  if (kind === 'sqlite') {
    // The seeding processes have closed the file, so its WAL is checkpointed into it and gone.
    const source = url.slice('sqlite:'.length);
    if (existsSync(`${source}-wal`) && statSync(`${source}-wal`).size > 0) throw new Error(`${source} still has a WAL; not cached`);
    const temporary = join(SEED_CACHE_DIR, `sqlite-${key}.db.${partial}`);
    const forget = onAbort(() => rmSync(temporary, { force: true }));
    copyFileSync(source, temporary);
    renameSync(temporary, sqliteFile(key));
    forget();
  } else {
    const source = new URL(url).pathname.slice(1);
    const temporary = `store_api_seed_cache_${partial.replace('-', '_')}`;
    await admin(async (c) => {
      const forget = onAbort(() => admin((d) => d.query(`drop database if exists ${temporary} with (force)`)));
      await copyDatabase(c, temporary, source);
      // Another run that kept the same key meanwhile wins; this copy goes.
      await c.query(`alter database ${temporary} rename to ${templateName(key)}`).catch(() => c.query(`drop database ${temporary}`));
      forget();
    });
  }
  writeFileSync(recordFile(kind, key), JSON.stringify(record, null, 2));
  await evict(kind);
}

/** Keeps the KEPT most recently used stores of a backend, drops the others. */
async function evict(kind: Kind): Promise<void> {
  const records = readdirSync(SEED_CACHE_DIR)
    .filter((f) => f.startsWith(`${kind}-`) && f.endsWith('.json'))
    .map((f) => ({ key: f.slice(kind.length + 1, -'.json'.length), used: statSync(join(SEED_CACHE_DIR, f)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { key } of records.slice(KEPT)) {
    rmSync(recordFile(kind, key), { force: true });
    if (kind === 'sqlite') rmSync(sqliteFile(key), { force: true });
    else await admin((c) => c.query(`drop database if exists ${templateName(key)} with (force)`));
  }
}
