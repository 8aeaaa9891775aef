import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import type pg from 'pg';
import { openSqliteConnection, type DB, type Dialect, type Store } from '../../db/database.ts';
import { withStatementCache } from '../../db/statement-cache.ts';
import { queryArraysOn } from '../../db/pg-array-query.ts';
import type { Database } from '../../db/tables.ts';
import type { ByteWriter } from './bytes.ts';
import { CopyOut, type CopyReader } from './copy-out.ts';

/**
 * A connection of an export's own, in a read-only transaction, so that every batch of a long export (and
 * the order items loaded beside it) reads one snapshot, while the app's own connection stays free.
 */
export interface ExportConnection {
  /** Which database it reads: the lines of some exports are written by the database itself (rows.ts). */
  dialect: Dialect;
  /** Kysely bound to this connection, for building queries and for `attach`. */
  db: DB;
  /** Runs a query and returns its rows as arrays of values in select order (no per-row objects: the fast path). */
  arrays(query: CompiledQuery): Promise<unknown[][]>;
  /**
   * PostgreSQL only: runs `COPY (…) TO STDOUT` on the export's snapshot, its rows read by `reader`. Until the
   * COPY has ended the connection runs nothing else; closed before that (the client went away), the
   * connection is cut off and dropped, since a COPY cannot be stopped and a paused one would hold it forever.
   */
  copyOut?(statement: string, reader: CopyReader, out?: ByteWriter): CopyOut;
  /** Ends the transaction and gives the connection back (closes it on SQLite). Safe to call twice. */
  close(): Promise<void>;
}

function sqliteExportConnection(path: string): ExportConnection {
  // Its own read-only connection: WAL lets it read beside the writer, and better-sqlite3 being synchronous,
  // sharing the app's connection would stall every other request for the whole export.
  const conn: SQLite.Database = openSqliteConnection(path, true);
  // A one-pass scan gains nothing from a large page cache (the OS caches the file), and 64 MB of cache per
  // running export would be most of its memory.
  conn.pragma('cache_size = -4000');
  conn.exec('begin');
  const statements = new Map<string, SQLite.Statement>();
  let open = true;
  return {
    dialect: 'sqlite',
    // Prepared statements kept by their SQL: the nested values of each batch (order items, `in (…)` one
    // parameter per row) are loaded by the same query for every batch of a size (BatchSource rounds sizes to
    // powers of two), and preparing a statement of hundreds of parameters costs more than running it.
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(conn) }) }),
    arrays: async (query) => {
      let stmt = statements.get(query.sql);
      if (!stmt) statements.set(query.sql, (stmt = conn.prepare(query.sql).raw(true)));
      return stmt.all(...query.parameters) as unknown[][];
    },
    close: async () => {
      if (!open) return;
      open = false;
      conn.close();
    },
  };
}

async function postgresExportConnection(pool: pg.Pool, label: string): Promise<ExportConnection> {
  const client = await pool.connect();
  let open = true;
  // The connection may be lost while the export waits for its client (an outage, an operator ending the
  // session): the batch after fails, and the client is given back with its error so that the pool drops it.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  const giveBack = (err?: Error) => {
    client.off('error', onError);
    client.release(err);
  };
  try {
    await client.query('begin isolation level repeatable read read only');
    // Names the export in pg_stat_activity (and lets a test see that an aborted export let go of it).
    await client.query(`select set_config('application_name', $1, true)`, [label.slice(0, 63)]);
  } catch (err) {
    giveBack(err as Error);
    throw err;
  }
  const single = { query: client.query.bind(client), release: () => {} };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => single as never, end: async () => {} } }) });
  let copying: CopyOut | undefined;
  return {
    dialect: 'postgres',
    db,
    arrays: async (query) => (await queryArraysOn(client, undefined, query.sql, [...query.parameters])).rows,
    copyOut: (statement, reader, out) => (copying = client.query(new CopyOut(statement, reader, out))),
    close: async () => {
      if (!open) return;
      open = false;
      if (copying?.running) {
        // The backend may be blocked writing rows nobody reads: closing the socket ends its COPY and its session.
        client.connection.stream.destroy();
        return giveBack(new Error('export stopped during COPY'));
      }
      // A COPY that failed (an error, a lost connection) leaves a connection not to be used again.
      lost ??= copying?.error;
      if (lost) return giveBack(lost);
      try {
        await client.query('rollback');
        giveBack();
      } catch (err) {
        // A connection that cannot even roll back is not given back to the pool.
        giveBack(err as Error);
      }
    },
  };
}

/** An export connection; an in-memory SQLite store has no file to open again, so it reads through the app's own. */
export async function openExportConnection(store: Store, label: string): Promise<ExportConnection> {
  if (store.dialect === 'postgres' && store.pgPool) return postgresExportConnection(store.pgPool, label);
  if (store.sqlitePath) return sqliteExportConnection(store.sqlitePath);
  return {
    dialect: store.dialect,
    db: store.db,
    arrays: async (query) => (await store.db.executeQuery<Record<string, unknown>>(query)).rows.map((r) => Object.values(r)),
    close: async () => {},
  };
}
