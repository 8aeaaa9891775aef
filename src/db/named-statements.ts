import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * PostgreSQL statements run by name (pg's `name` in the query config), so that each connection parses and
 * plans them once and then only binds and executes. Only texts a caller registers are named: the listing
 * engine's compiled pages and items, which repeat request after request. A named statement lives on every
 * connection that ran it until the connection closes (pg cannot drop it), so the names are bounded per
 * process; texts beyond the bound run unnamed, as before.
 */
const MAX_NAMED = 1000;
const statementNames = new Map<string, string>();

/** Runs `sql` by name on PostgreSQL from now on (while there are names left). Harmless on SQLite, which keeps its statements by text. */
export function nameStatement(sql: string): void {
  if (statementNames.size < MAX_NAMED && !statementNames.has(sql)) statementNames.set(sql, `store_api_${statementNames.size + 1}`);
}

/** The name `sql` runs by, if registered. */
export const statementName = (sql: string): string | undefined => statementNames.get(sql);

/** A pool client as Kysely's PostgreSQL driver uses it, running the registered texts by name. */
function namingClient(client: pg.PoolClient): PostgresPoolClient {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(what: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof what !== 'string') return client.query(what as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
    const values = parameters as unknown[];
    const name = statementNames.get(what);
    const result = name ? client.query({ name, text: what, values }) : client.query(what, values);
    return result as unknown as Promise<PostgresQueryResult<R>>;
  }
  return { query, release: () => client.release() };
}

/**
 * The pool for Kysely's PostgreSQL dialect: its clients run the registered statements by name. Kysely keeps
 * one connection object per client it is given, so each pg client gets one wrapper for its whole life.
 */
export function namingPool(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) wrappers.set(client, (wrapper = namingClient(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}
