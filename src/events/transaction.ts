import { sql } from 'kysely';
import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { DEFAULT_WRITE_WAIT_MS, WriteQueue } from '../db/write-queue.ts';
import { AppError } from '../errors/app-error.ts';
import type { EventBus } from './bus.ts';
import type { WriteContext } from './log.ts';

const queues = new WeakMap<Store, WriteQueue>();

/**
 * PostgreSQL: the line this store's writers queue in (see WriteQueue), with half the pool's connections as
 * slots. SQLite needs none: its one connection is the line (see WaitingSqliteDriver).
 */
export function writeQueueOf(store: Store): WriteQueue | undefined {
  if (!store.pgPool) return undefined;
  let queue = queues.get(store);
  if (!queue) queues.set(store, (queue = new WriteQueue(Math.floor((store.pgPool.options.max ?? 10) / 2), store.writeWaitMs ?? DEFAULT_WRITE_WAIT_MS)));
  return queue;
}

/**
 * Runs a write (a change through the admin API, an import) in a transaction of its own. On PostgreSQL it
 * waits its turn in the store's write queue first, and waits for row locks no longer than the queue would
 * (lock_timeout: a row that an import holds until its commit), failing then as busy (503, Retry-After).
 * After the commit, when the write recorded events, it wakes `bus` (this process's webhook dispatcher and
 * long-polling readers; other processes hear PostgreSQL's NOTIFY or poll): no caller does that by hand.
 */
export async function inTransaction<T>(store: Store, bus: EventBus | undefined, work: (w: WriteContext) => Promise<T>): Promise<T> {
  const recorded = { events: 0 };
  const write = () => store.db.transaction().execute(async (trx) => {
    if (store.dialect === 'postgres') await sql`select set_config('lock_timeout', ${`${store.writeWaitMs ?? DEFAULT_WRITE_WAIT_MS}ms`}, true)`.execute(trx);
    return work({ trx, dialect: store.dialect, now: nowIso(), recorded });
  });
  const queue = writeQueueOf(store);
  const result = await (queue ? queue.run(write) : write()).catch((error: unknown) => {
    throw LOCK_WAIT_ENDED.has(String((error as { code?: unknown }).code)) ? busy() : error;
  });
  if (recorded.events > 0) bus?.appended();
  return result;
}

// lock_not_available (lock_timeout passed), deadlock_detected: passing conditions; the write can be retried.
const LOCK_WAIT_ENDED = new Set(['55P03', '40P01']);
const busy = () => new AppError('service_unavailable', 'Another change of the same data (an import) is in progress; retry shortly.', { headers: { 'retry-after': '1' } });
