import type SQLite from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult, type SqliteDialectConfig } from 'kysely';
import { DEFAULT_WRITE_WAIT_MS } from './write-queue.ts';

/** SQLite's SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, …): the file was locked, nothing was done. */
export const isBusy = (error: unknown): boolean => /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code ?? ''));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Kysely's SQLite driver, changed in how it waits for the file's write lock when another process holds it
 * (`store-api import` beside a running server):
 *
 * - Transactions begin IMMEDIATE, taking the write lock first. Kysely begins DEFERRED: such a transaction
 *   reads, then finds when it first writes that another process wrote since its snapshot, and SQLite fails it
 *   with SQLITE_BUSY at once (waiting could not help it), whatever busy_timeout says.
 * - The wait is not busy_timeout, which sleeps inside better-sqlite3 and so stops the whole process: a
 *   statement that finds the file busy outside a transaction (the BEGIN IMMEDIATE itself, or a single write)
 *   did nothing yet, so it is tried again after a pause, with the connection handed back meanwhile. The
 *   event loop and this process's other queries (reads, above all) go on; the writers queue until the lock
 *   is free or `waitMs` has passed, when the SQLITE_BUSY error stands (a 503 with Retry-After).
 *
 * Inside a transaction nothing waits: once BEGIN IMMEDIATE holds the lock, no statement of the transaction
 * can find the file busy in WAL mode.
 */
class WaitingSqliteDriver extends SqliteDriver {
  readonly #conn: SQLite.Database;
  readonly #waitMs: number;

  constructor(config: SqliteDialectConfig, conn: SQLite.Database, waitMs: number) {
    super(config);
    this.#conn = conn;
    this.#waitMs = waitMs;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    return {
      executeQuery: <R>(query: CompiledQuery) => this.#execute<R>(inner, query),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => inner.streamQuery<R>(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async #execute<R>(inner: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.#waitMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await inner.executeQuery<R>(query);
      } catch (error) {
        if (!isBusy(error) || this.#conn.inTransaction || Date.now() + pause > deadline) throw error;
      }
      // The caller still holds the connection as far as Kysely knows, but nothing of it is open on it.
      await super.releaseConnection();
      await sleep(pause);
      await super.acquireConnection();
    }
  }
}

/** The SQLite dialect over one better-sqlite3 connection, with writers that queue (see WaitingSqliteDriver). */
export class WaitingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #conn: SQLite.Database;
  readonly #waitMs: number;

  constructor(config: SqliteDialectConfig, conn: SQLite.Database, waitMs = DEFAULT_WRITE_WAIT_MS) {
    super(config);
    this.#config = config;
    this.#conn = conn;
    this.#waitMs = waitMs;
    // The driver waits itself, without blocking the process; SQLite must report a busy file at once.
    conn.pragma('busy_timeout = 0');
  }

  override createDriver(): Driver {
    return new WaitingSqliteDriver(this.#config, this.#conn, this.#waitMs);
  }
}
