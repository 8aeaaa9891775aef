import { Kysely, PostgresDialect } from 'kysely';
import { createPgPool, type Store } from '../../db/database.ts';
import type { Database } from '../../db/tables.ts';

/**
 * The database as the webhook dispatcher uses it. On PostgreSQL it is a pool of its own, of two
 * connections: delivery work never takes a connection the API's requests wait for, and its load on the
 * database is bounded whatever the backlog. Its commits do not wait for the WAL flush
 * (`synchronous_commit = off`): a crash may forget the last few hundred milliseconds of dispatcher
 * bookkeeping, which only means an attempt made again with the same webhook-id (at least once, as
 * promised) or a fan-out done again with the same message ids, and the disk is left to the store's writes.
 * On SQLite it is the store itself (one process writes it through one connection).
 */
export function dispatcherStore(store: Store): { store: Store; close(): Promise<void> } {
  if (!store.pgPool) return { store, close: async () => {} };
  // The store's options (timeouts, keep-alive) and its handling of lost connections.
  const pool = createPgPool({ ...store.pgPool.options, max: 2 });
  // Runs before the first query of every new connection (a client's queries run in order).
  pool.on('connect', (client) => void client.query('set synchronous_commit = off').catch(() => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { store: { db, dialect: 'postgres', pgPool: pool, close: () => db.destroy() }, close: () => db.destroy() };
}
