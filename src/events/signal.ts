import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Store } from '../db/database.ts';
import type { EventBus } from './bus.ts';

/** The channel recordEvents notifies in every transaction that appends events (PostgreSQL). */
export const EVENTS_CHANNEL = 'store_events';

/** Delays before opening the LISTEN connection again after it was lost or could not be opened. */
const RETRY_MS = { first: 250, max: 5000 };

/**
 * Wakes waiters when events may have been appended: at once for writes of this process (the bus) and,
 * on PostgreSQL, for writes of every node (LISTEN on a connection of its own, opened on first use).
 * A wake-up is only a hint to look again: waiters always re-read the log, and also look on their own
 * every so often, so a lost notification (a dropped connection, a write by another process on SQLite)
 * delays them but never loses an event. A lost LISTEN connection is opened again by itself.
 */
export class EventSignal {
  private readonly emitter = new EventEmitter();
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  /** After a failure, LISTEN is not tried again before this time (a timer tries it then). */
  private retryAt = 0;
  private retryDelay = RETRY_MS.first;
  private retryTimer: NodeJS.Timeout | undefined;
  private everListened = false;
  /** Grows on every wake-up; a waiter compares it with the value it read before looking at the log. */
  generation = 0;
  private readonly onAppended = () => this.wake();

  constructor(private readonly store: Store, private readonly bus: EventBus) {
    this.emitter.setMaxListeners(0);
    bus.on('appended', this.onAppended);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True when notifications of other nodes arrive (PostgreSQL with the LISTEN connection up). */
  get hearsOtherNodes(): boolean {
    return this.listener !== undefined;
  }

  private wake(): void {
    this.generation++;
    this.emitter.emit('wake');
  }

  /**
   * Opens the LISTEN connection if this is PostgreSQL and it is not open. Never fails: while it cannot be
   * opened, waiters poll the log on their own, and it is tried again after a delay (see retryLater).
   */
  listen(): Promise<void> {
    if (this.closed || this.listener || !this.store.pgPool || Date.now() < this.retryAt) return Promise.resolve();
    this.connecting ??= this.open().catch(() => this.retryLater()).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = new pg.Client(this.store.pgPool!.options);
    let lost = false;
    // The connection ends (an error, the server closing it): let go of it, and if it was the one listening,
    // open another. A pg client without an 'error' listener would end the process.
    const drop = () => {
      if (lost) return;
      lost = true;
      const wasListening = this.listener === client;
      if (wasListening) this.listener = undefined;
      void client.end().catch(() => {});
      if (wasListening) this.retryLater();
    };
    client.on('error', drop);
    client.on('end', drop);
    let schema: string | undefined;
    client.on('notification', (n) => {
      if (!n.payload || n.payload === schema) this.wake();
    });
    try {
      await client.connect();
      schema = (await client.query<{ schema: string }>('select current_schema() as schema')).rows[0]?.schema;
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch {
      drop();
      this.retryLater();
      return;
    }
    if (this.closed || lost) {
      drop();
      this.retryLater();
      return;
    }
    this.listener = client;
    this.everListened = true;
    this.retryDelay = RETRY_MS.first;
    // Events committed while no one listened (before the first LISTEN, or while it was lost) are found by
    // the waiters' own look, which this wake-up makes them take now.
    this.wake();
  }

  /** Opens the connection again after a delay that doubles while the database stays away. */
  private retryLater(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(RETRY_MS.max, delay * 2);
    this.retryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retryAt = 0;
      void this.listen();
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * Resolves at the next wake-up after `since` (a generation read before the caller last looked), after
   * `ms`, or when `abort` fires, whichever is first.
   */
  async wait(since: number, ms: number, abort?: AbortSignal): Promise<void> {
    // The first opening is waited for (a waiter then hears other nodes from the start); opening it again
    // after a loss is not: a database that does not answer must not hold waiters for a connect timeout,
    // and the reopened connection wakes them anyway.
    const opening = this.listen();
    if (!this.everListened) await opening;
    if (this.generation !== since || ms <= 0 || abort?.aborted || this.closed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off('wake', done);
        abort?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.on('wake', done);
      abort?.addEventListener('abort', done, { once: true });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.bus.off('appended', this.onAppended);
    this.emitter.emit('wake');
    await this.connecting;
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => {});
  }
}
