import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { prepareSqliteFile } from './sqlite-files.ts';
import { withStatementCache } from './statement-cache.ts';
import type { Database } from './tables.ts';

export type Dialect = 'sqlite' | 'postgres';
export type DB = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Repositories take either the database or an open transaction; the caller decides. */
export type Executor = DB | Trx;

export interface Store {
  db: DB;
  dialect: Dialect;
  /** The SQLite file (absent for PostgreSQL); exports open their own read connection on it so they never hold the writer. */
  sqlitePath?: string;
  /** The PostgreSQL pool, for the few things that talk to the driver directly (exports, LISTEN). */
  pgPool?: pg.Pool;
  close(): Promise<void>;
}

// int8 (counts, sequences) arrives as text from pg; our values fit in a double. numeric stays text: money is exact.
pg.types.setTypeParser(20, (v) => Number(v));

export function openSqliteConnection(path: string, readonly = false): SQLite.Database {
  const conn = new SQLite(path, { readonly, fileMustExist: readonly });
  conn.pragma('journal_mode = WAL');
  conn.pragma('busy_timeout = 5000');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  conn.pragma('cache_size = -64000');
  return conn;
}

export interface OpenOptions {
  /** PostgreSQL schema to use (tests isolate themselves in a schema of their own). */
  pgSchema?: string;
  pgPoolSize?: number;
}

export function openStore(databaseUrl: string, options: OpenOptions = {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const raw = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    const path = raw === ':memory:' ? raw : resolve(raw);
    // Owner-only: the file holds webhook secrets and the hashing key.
    if (path !== ':memory:') prepareSqliteFile(path);
    // One connection: better-sqlite3 is synchronous, so in one process it is the single writer and the
    // readers at once. Long exports read through connections of their own (WAL lets them run beside it).
    const conn = openSqliteConnection(path);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(conn) }) });
    return { db, dialect: 'sqlite', sqlitePath: path === ':memory:' ? undefined : path, close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.pgPoolSize ?? 10,
    ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
  });
  // A dropped idle connection must not take the process down; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  return { db, dialect: 'postgres', pgPool: pool, close: () => db.destroy() };
}

export const nowIso = (): string => new Date().toISOString();
