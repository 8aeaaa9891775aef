import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Migration } from 'kysely';
import pg from 'pg';
import { openStore, type Dialect, type Store } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgReachable: Promise<boolean> | undefined;

/**
 * Whether PostgreSQL answers. Asked a few times over ~20 s: on a loaded machine (or with every connection
 * slot briefly taken by other suites) one slow connect must not count as "no PostgreSQL", which under CI
 * fails the whole file.
 */
async function canReachPostgres(): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch {
      await client.end().catch(() => {});
      if (attempt >= 4) return false;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

/**
 * The dialects a suite runs against: both, always. PostgreSQL is skipped only outside CI when it cannot be
 * reached; under CI=true an unreachable PostgreSQL fails the run instead of hiding.
 */
export async function dialects(): Promise<Dialect[]> {
  const only = process.env.TEST_DIALECTS?.split(',') as Dialect[] | undefined;
  pgReachable ??= canReachPostgres();
  const reachable = await pgReachable;
  if (!reachable && process.env.CI === 'true') throw new Error(`PostgreSQL at ${PG_URL} is required under CI=true`);
  return (only ?? ['sqlite', 'postgres']).filter((d) => d === 'sqlite' || reachable);
}

export interface TestDatabase {
  url: string;
  store: Store;
  /** For opening more connections to the same database (a second node). */
  open(): Store;
  drop(): Promise<void>;
}

/** A fresh, migrated, empty database: a temporary SQLite file, or a PostgreSQL database of its own; `migrations`: extra ones (a fixture resource's table). */
export async function createTestDatabase(dialect: Dialect, migrations: Record<string, Migration> = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-test-'));
    const url = `sqlite:${join(dir, 'store.db')}`;
    const store = openStore(url);
    await migrateToLatest(store.db, { extra: migrations });
    return { url, store, open: () => openStore(url), drop: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  // A database of its own, not a schema: Kysely's migrator reads the whole catalog of its database, and
  // another suite dropping its schema at that moment would make that read fail.
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const store = openStore(url.toString());
  await migrateToLatest(store.db, { extra: migrations });
  return {
    url: url.toString(),
    store,
    open: () => openStore(url.toString()),
    drop: async () => {
      await store.close();
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Tables of a PostgreSQL store that ANALYZE has given statistics (pg_statistic holds rows only once it ran). */
export async function analyzedTables(store: Store): Promise<Set<string>> {
  const r = await sql<{ tablename: string }>`select distinct tablename from pg_stats where schemaname = current_schema()`.execute(store.db);
  return new Set(r.rows.map((row) => row.tablename));
}
