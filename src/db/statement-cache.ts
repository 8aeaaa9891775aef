import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

const MAX_STATEMENTS = 500;

/**
 * The connection as Kysely's SQLite driver uses it, with prepared statements kept by their SQL. The driver
 * prepares every query anew, and for a small query compiling the SQL costs more than running it. A statement
 * busy in an iteration (a streamed read) cannot run twice at once, so such a query gets a fresh statement.
 * The cache is bounded; SQLite re-prepares a kept statement by itself when the schema changes.
 */
export function withStatementCache(conn: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => conn.close(),
    prepare: (sql) => {
      const cached = statements.get(sql);
      if (cached) return cached.busy ? conn.prepare(sql) : cached;
      const statement = conn.prepare(sql);
      if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
      return statement;
    },
  };
}
