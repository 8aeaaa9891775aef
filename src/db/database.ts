import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type CompiledQuery, type Transaction } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { namingPool, statementName } from './named-statements.ts';
import { queryArrays } from './pg-array-query.ts';
import { objectRows } from './row-builders.ts';
import { isBusy, WaitingSqliteDialect } from './sqlite-driver.ts';
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
  /** How long a write waits its turn before it fails as busy (DATABASE_WRITE_WAIT_MS); see inTransaction. */
  writeWaitMs?: number;
  close(): Promise<void>;
}

// int8 (counts, sequences) arrives as text from pg; our values fit in a double. numeric stays text: money is exact.
pg.types.setTypeParser(20, (v) => Number(v));

/** How long opening a file waits for another process to finish switching it to WAL (see enterWal). */
export const WAL_SWITCH_WAIT_MS = 5000;
const pauses = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switches the file to WAL (a no-op once it is). On a new file the switch is a write, which SQLite begins as a
 * read and then upgrades: when another process holds the write lock at that moment (it is switching the same
 * new file, or creating its tables), SQLite fails the upgrade at once with SQLITE_BUSY, without waiting through
 * busy_timeout, since two readers both upgrading could deadlock. So five commands started at once on a new file
 * could end one of them "database is locked" (seen in CI). Nothing was done when it fails, so it is tried again
 * after a pause, for WAL_SWITCH_WAIT_MS at most. The pause blocks the thread (opening is synchronous, better-sqlite3),
 * so only a connection that can switch the file waits: the store's own, opened at start. A read-only one (an
 * export's reader, opened while requests are served, on a file that is WAL already) tries once, as before: a
 * failure is that request's 503, never a stalled process.
 */
function enterWal(conn: SQLite.Database, readonly: boolean): void {
  const deadline = readonly ? 0 : Date.now() + WAL_SWITCH_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      conn.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() + pause > deadline) throw error;
    }
    Atomics.wait(pauses, 0, 0, pause);
  }
}

export function openSqliteConnection(path: string, readonly = false): SQLite.Database {
  const conn = new SQLite(path, { readonly, fileMustExist: readonly });
  enterWal(conn, readonly);
  conn.pragma('busy_timeout = 5000');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  // SQLite's own page cache, per connection, in KiB (negative): resident memory that, once filled, stays. 16 MB
  // holds a store's hot pages (the indexes, the pages being read); a miss is a read from the operating system's
  // page cache, which holds the file anyway, not from disk. At 64 MB a server reading a large store kept up to
  // 48 MB more; 16 MB did not change the read benchmark's req/s measurably (bench/results/rss-2026-11-23.md).
  conn.pragma('cache_size = -16000');
  return conn;
}

export interface OpenOptions {
  /** PostgreSQL schema to use (tests isolate themselves in a schema of their own). */
  pgSchema?: string;
  pgPoolSize?: number;
  /** PostgreSQL: how long a query waits for a connection (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** How long a write waits its turn before it fails as busy (DATABASE_WRITE_WAIT_MS, 30 s by default). */
  writeWaitMs?: number;
}

/** Fails a query that cannot get a connection in this time (503) rather than holding its request while the database is away. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

const ignore = (): void => {};

/**
 * A pg pool that lives through losing its connections (an operator ending sessions, a restart, a failover,
 * an idle-connection reset). pg reports a lost connection as an 'error' event on its client, and an
 * EventEmitter's 'error' without a listener ends the process. The pool listens on its idle clients only;
 * a client checked out (by Kysely for a query or transaction, by an export, by the dispatcher) has no
 * listener of the pool's, so every client gets one of its own for its whole life. The error itself still
 * reaches whoever uses the client: its query fails, or its next one does ("not queryable"), and the pool
 * discards a client that is no longer queryable when it is released, opening a fresh one on demand.
 *
 * `connectionTimeoutMillis` bounds both opening a connection and waiting for a free one, so requests answer
 * 503 within it while the database is down instead of queueing for ever; TCP keep-alive finds a peer that
 * vanished without closing the socket (a failover, a dropped NAT entry). The options are copied to every
 * client the pool opens, and to the clients opened from `pool.options` (LISTEN, the dispatcher's pool).
 */
export function createPgPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ keepAlive: true, keepAliveInitialDelayMillis: 10_000, connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS, ...config });
  pool.on('connect', (client) => client.on('error', ignore));
  // An idle client that loses its connection: the pool has already removed it.
  pool.on('error', ignore);
  return pool;
}

type DirectReader = (query: CompiledQuery) => unknown[] | Promise<unknown[]> | undefined;
const directReaders = new WeakMap<object, DirectReader>();

/** Rows as arrays of values in select order, through Kysely (a page's nested values; an export reads its own way). */
export const arraysThrough =
  (db: Executor) =>
  async (query: CompiledQuery): Promise<unknown[][]> =>
    (await db.executeQuery<Record<string, unknown>>(query)).rows.map((r) => Object.values(r));

/**
 * The rows of a read-only query run straight on the store's SQLite connection or PostgreSQL pool, or undefined
 * when the caller must go through Kysely: a transaction's executor, or (SQLite) a transaction open on the
 * connection (whose uncommitted writes a read outside it must not see). On PostgreSQL a query outside a
 * transaction takes any pooled connection either way; through Kysely's executor the API's pages cost 16-25 ms
 * scavenges (against ~4 ms for the same query through `pool.query`, measured with --trace-gc in (b)) and about
 * 300 µs more CPU per page (bench/results/core-2026-11-23-helperB.md). Kysely's executor takes ~15 promises and microtask turns
 * per query (its connection mutex, the driver and provider layers), measured at ~15-25 µs on the 2-core bench
 * machine, against ~50 µs for the whole of a single item in the bare ceiling; better-sqlite3 runs a query
 * synchronously, so while no transaction is open nothing can come between the statement and its rows. Reads
 * that find the connection in a transaction queue behind it through Kysely, as before.
 */
export function readDirect(db: Executor, query: CompiledQuery): unknown[] | Promise<unknown[]> | undefined {
  return directReaders.get(db)?.(query);
}

export function openStore(databaseUrl: string, options: OpenOptions = {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const raw = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    const path = raw === ':memory:' ? raw : resolve(raw);
    // Owner-only: the file holds webhook secrets and the hashing key.
    if (path !== ':memory:') prepareSqliteFile(path);
    // One connection: better-sqlite3 is synchronous, so in one process it is the single writer and the
    // readers at once. Long exports read through connections of their own (WAL lets them run beside it).
    // Its transactions begin IMMEDIATE and wait for another process's writer without blocking this one.
    const conn = openSqliteConnection(path);
    const statements = withStatementCache(conn);
    const db = new Kysely<Database>({ dialect: new WaitingSqliteDialect({ database: statements }, conn, options.writeWaitMs) });
    directReaders.set(db, (query) => {
      if (conn.inTransaction) return undefined;
      // Arrays, made objects by a builder of their own column list (row-builders.ts). The statement is the one
      // Kysely's driver is given too, which reads objects: raw only for this call.
      const statement = statements.prepare(query.sql) as SQLite.Statement;
      statement.raw(true);
      try {
        const rows = statement.all(query.parameters) as unknown[][];
        return objectRows(query.sql, () => statement.columns().map((c) => c.name), rows, rows[0]?.length ?? 0);
      } finally {
        statement.raw(false);
      }
    });
    return { db, dialect: 'sqlite', sqlitePath: path === ':memory:' ? undefined : path, writeWaitMs: options.writeWaitMs, close: () => db.destroy() };
  }
  const pool = createPgPool({
    connectionString: databaseUrl,
    max: options.pgPoolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
  });
  // The listing engine's statements run by name (named-statements.ts): parsed and planned once per connection.
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: namingPool(pool), cursor: Cursor }) });
  directReaders.set(db, (query) => {
    // Rows as arrays (pg-array-query.ts), made objects by a builder of their own column list (row-builders.ts).
    return queryArrays(pool, statementName(query.sql), query.sql, query.parameters as unknown[]).then((r) =>
      objectRows(query.sql, () => r.fields.map((f) => f.name), r.rows, r.fields.length),
    );
  });
  return { db, dialect: 'postgres', pgPool: pool, writeWaitMs: options.writeWaitMs, close: () => db.destroy() };
}

export const nowIso = (): string => new Date().toISOString();
