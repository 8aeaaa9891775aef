import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Store } from '../db/database.ts';
import type { EventBus } from './bus.ts';

/** The channel recordEvents notifies in every transaction that appends events (PostgreSQL). */
export const EVENTS_CHANNEL = 'store_events';

/**
 * Wakes waiters when events may have been appended: at once for writes of this process (the bus) and,
 * on PostgreSQL, for writes of every node (LISTEN on a connection of its own, opened on first use).
 * A wake-up is only a hint to look again: waiters always re-read the log, and also look on their own
 * every so often, so a lost notification (a dropped connection, a write by another process on SQLite)
 * delays them but never loses an event.
 */
export class EventSignal {
  private readonly emitter = new EventEmitter();
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
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

  /** Opens the LISTEN connection if this is PostgreSQL and it is not open; failures leave waiters to poll. */
  listen(): Promise<void> {
    if (this.closed || this.listener || !this.store.pgPool) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new pg.Client(this.store.pgPool!.options);
      const drop = () => {
        if (this.listener === client) this.listener = undefined;
        void client.end().catch(() => {});
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
        if (this.closed) return void (await client.end());
        this.listener = client;
        // Events committed while no one listened are found by the waiters' own look.
        this.wake();
      } catch {
        drop();
      }
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * Resolves at the next wake-up after `since` (a generation read before the caller last looked), after
   * `ms`, or when `abort` fires, whichever is first.
   */
  async wait(since: number, ms: number, abort?: AbortSignal): Promise<void> {
    await this.listen();
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
    this.bus.off('appended', this.onAppended);
    this.emitter.emit('wake');
    await this.connecting;
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => {});
  }
}
