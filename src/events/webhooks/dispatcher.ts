import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import { isConnectionLoss } from '../../db/connection-loss.ts';
import { nowIso, type Store } from '../../db/database.ts';
import type { EventBus } from '../bus.ts';
import { EventSignal } from '../signal.ts';
import { anyEnabled, claimDue, fanOut, FANOUT_BATCH, finishAttempts, nextDueAt, release, renewClaims, type Claimed, type Finished, type Outcome } from './outbox.ts';
import { retryDelayMs, scheduleSpan } from './schedule.ts';
import { dispatcherStore } from './dispatcher-store.ts';
import { createSender, DELIVERY_TIMEOUT_MS, type Sender } from './send.ts';

const MIN_WAIT_MS = 2;
const COALESCE_MS = 50;
/** Attempts that end within this of each other are recorded in one transaction. */
const FINISH_BATCH_MS = 10;
const SLOT_GATHER_MS = 3;

export interface DispatcherDeps {
  store: Store;
  bus: EventBus;
  config: Pick<Config, 'webhooks'>;
  log?: FastifyBaseLogger;
}

export interface DispatcherOptions {
  /** How long `stop` lets attempts in flight finish before abandoning them (they are retried later). */
  graceMs?: number;
  timeoutMs?: number;
  leaseMs?: number;
}

/**
 * A claim lasts this long unless renewed. A live node renews the claims of its attempts in flight (one
 * UPDATE every third of it), so a slow receiver keeps its claim for the whole 15 s timeout, while the
 * claims of a node killed mid-attempt come back to the other nodes, or to its restart, within this time.
 */
const LEASE_MS = 9000;

/**
 * Delivers webhooks from the database: fans new events out into the outbox, claims due deliveries,
 * sends them with bounded concurrency beside the request handling, and records every attempt. All state
 * lives in the database, so a crash at any moment loses nothing: a restarted node (or another node)
 * finds the pending rows, and a claim whose node died runs out after its lease.
 */
export class WebhookDispatcher {
  readonly node = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly signal: EventSignal;
  private readonly sender: Sender;
  /** Attempts waiting for the receiver: at most `concurrency`. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Outcomes still to be written. */
  private readonly recording = new Set<Promise<void>>();
  private readonly stopAttempts = new AbortController();
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private stopping = false;
  private kick: AbortController | undefined;
  private kicked = false;
  private loop: Promise<void> | undefined;
  /** Whether the last look found an enabled subscription. */
  private active = false;
  /** The signal generation of the last fan-out: unchanged means no commit was signalled since. */
  private fannedAt = -1;
  /** Whether deliveries may wait unclaimed and due (a fan-out left some, or a claim filled every slot). */
  private backlog = true;
  private renewal: NodeJS.Timeout | undefined;
  private finishing: Array<Finished & { resolve: () => void; reject: (err: unknown) => void }> = [];
  private flushTimer: NodeJS.Timeout | undefined;
  /** The database as delivery uses it (a small pool of its own on PostgreSQL). */
  private readonly own: ReturnType<typeof dispatcherStore>;

  constructor(private readonly deps: DispatcherDeps, private readonly options: DispatcherOptions = {}) {
    this.signal = new EventSignal(deps.store, deps.bus);
    this.own = dispatcherStore(deps.store);
    this.concurrency = deps.config.webhooks.concurrency;
    const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.sender = createSender({ allowPrivate: deps.config.webhooks.allowPrivate, maxSockets: this.concurrency, timeoutMs });
  }

  start(): void {
    this.loop ??= this.run();
    this.renewal ??= setInterval(() => void this.renew(), this.leaseMs / 3);
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    if (this.inFlight.size === 0 && this.recording.size === 0) return;
    await renewClaims(this.own.store.db, this.node, new Date(Date.now() + this.leaseMs).toISOString())
      .catch((err: unknown) => this.deps.log?.warn({ err }, 'webhook claims could not be renewed'));
  }

  /** Wakes the loop now (new events, a free slot). */
  private wake(): void {
    this.kicked = true;
    this.kick?.abort();
  }

  /**
   * One pass: fan out, claim what is due and can be sent now. Returns how long to wait before the next.
   *
   * A `full` pass (the first, one after the poll interval or an error) does every step. The others, run when
   * a commit was signalled or an attempt ended, do only what can have changed, each step costing a
   * transaction: fan out only when events were signalled since the last fan-out, claim only when rows wait
   * unclaimed (fan-out left some, or the last claim filled every slot), ask whether any subscription is
   * enabled only when the last pass found none. What they skip (a retry falling due, a claim of a dead node
   * running out, a commit of another process on SQLite) waits for the next full pass, within the poll interval.
   */
  private async pass(full: boolean): Promise<number> {
    const { config } = this.deps;
    const store = this.own.store;
    // Without an enabled subscription a pass is one indexed read, not the transactions below.
    if (full || !this.active) {
      this.active = await anyEnabled(store.db);
      if (!this.active) return config.webhooks.pollMs;
    }
    const generation = this.signal.generation;
    if (full || generation !== this.fannedAt) {
      for (;;) {
        const take = { node: this.node, limit: this.stopping ? 0 : this.concurrency - this.inFlight.size, leaseMs: this.leaseMs };
        const fanned = await fanOut(store, nowIso(), take);
        for (const c of fanned.claimed) this.launch(c);
        if (fanned.unclaimed > 0) this.backlog = true;
        if (fanned.read < FANOUT_BATCH || this.stopping) break;
      }
      // Events signalled while this fan-out ran change the generation again, so the next pass fans out too.
      this.fannedAt = generation;
    }
    const free = this.concurrency - this.inFlight.size;
    const claimed = this.stopping || free <= 0 || !(full || this.backlog) ? [] : await claimDue(store, this.node, free, this.leaseMs);
    for (const c of claimed) this.launch(c);
    // Fewer rows than free slots: nothing else is due and unclaimed now (until a fan-out or a full pass says otherwise).
    if (free > 0 && (full || this.backlog)) this.backlog = claimed.length === free;
    if (claimed.length > 0 && claimed.length === free) return 0;
    // While attempts are in flight, the end of each wakes the loop; when none is, the next due row does.
    if (this.inFlight.size > 0) return config.webhooks.pollMs;
    const due = await nextDueAt(store.db);
    if (!due) return config.webhooks.pollMs;
    const wait = Date.parse(due) - Date.now();
    // Due now and unclaimed (a retry whose time came while this pass ran): the next pass claims it, at once.
    if (wait <= 0) this.backlog = true;
    return Math.min(config.webhooks.pollMs, wait);
  }

  private async run(): Promise<void> {
    let failures = 0;
    // The first pass, and every one after the poll interval passed without a wake-up, looks at everything.
    let full = true;
    while (!this.stopping) {
      const generation = this.signal.generation;
      this.kicked = false;
      let delay: number;
      try {
        delay = await this.pass(full);
        full = false;
        failures = 0;
      } catch (err) {
        full = true;
        if (this.stopping) break;
        failures++;
        this.deps.log?.warn({ err }, 'webhook dispatcher pass failed');
        // The database away is tried again within seconds (and the LISTEN connection coming back wakes the
        // loop at once); anything else backs off further.
        delay = Math.min(isConnectionLoss(err) ? 5_000 : 30_000, 500 * 2 ** Math.min(failures, 6));
      }
      if (this.stopping) break;
      if (delay <= 0) continue;
      if (this.kicked) {
        // Slots free up one answer at a time: gather a few before claiming again, not a pass per answer.
        await new Promise((r) => setTimeout(r, SLOT_GATHER_MS));
        continue;
      }
      this.kick = new AbortController();
      // Never less than a timer tick: on SQLite every query resolves in microtasks, and a loop that never
      // waited on a timer would starve the sockets of the attempts in flight.
      await this.signal.wait(generation, Math.max(MIN_WAIT_MS, delay), this.kick.signal);
      this.kick = undefined;
      full = !this.kicked && this.signal.generation === generation;
      if (this.kicked) await new Promise((r) => setTimeout(r, SLOT_GATHER_MS));
      else if (this.signal.generation !== generation) await this.coalesce();
    }
  }

  /**
   * Woken by new events (not by a free slot): lets those that come close together gather for one pass rather
   * than a pass each; 50 ms is little against the delivery delay and saves most of the per-pass work at 100
   * events/s. While rows wait unclaimed (a burst that outruns the slots), a slot freeing up ends the wait
   * (after a few ms for others to free up too): waiting out the 50 ms then would cap delivery at `concurrency`
   * per 50 ms while writes go on, and the backlog would only drain once they stop.
   */
  private coalesce(): Promise<void> {
    return new Promise((resolve) => {
      const kick = new AbortController();
      const done = () => {
        clearTimeout(timer);
        if (this.kick === kick) this.kick = undefined;
        resolve();
      };
      const timer = setTimeout(done, COALESCE_MS);
      // The backlog is only changed by a pass, and none runs meanwhile.
      if (!this.backlog) return;
      this.kick = kick;
      kick.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        setTimeout(done, SLOT_GATHER_MS);
      }, { once: true });
    });
  }

  /** Sends in a slot of its own; the slot is free again once the receiver has answered (recording follows). */
  private launch(c: Claimed): void {
    const attempt = this.attempt(c)
      .catch((err: unknown) => this.deps.log?.error({ err, delivery: c.msgId }, 'webhook attempt failed'))
      .finally(() => {
        this.inFlight.delete(attempt);
        this.wake();
      });
    this.inFlight.add(attempt);
  }

  private async attempt(c: Claimed): Promise<void> {
    const { config } = this.deps;
    const store = this.own.store;
    const started = Date.now();
    const result = await this.sender.send(c, this.stopAttempts.signal);
    if (result.abandoned) return release(store.db, c, this.node);
    const now = nowIso();
    const failed = c.attempts + 1;
    let outcome: Outcome;
    if (result.ok) outcome = { status: 'delivered' };
    else if (result.statusCode === 410) outcome = { status: 'failed', disable: `The receiver answered 410 Gone to ${c.msgId} at ${now}.` };
    else {
      const wait = retryDelayMs(config.webhooks.retrySchedule, failed);
      outcome = wait === undefined
        ? { status: 'failed', disable: `Delivery ${c.msgId} failed ${failed} attempts over the whole retry schedule (${scheduleSpan(config.webhooks.retrySchedule)}); last: ${result.error}.` }
        : { status: 'retry', at: new Date(Date.now() + wait).toISOString() };
    }
    // The claim holds the row until the outcome is recorded, so no other pass or node takes it meanwhile.
    const recorded = this.record({ c, attempt: { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, statusCode: result.statusCode, error: result.error, response: result.response }, outcome })
      .then(() => {
        if (outcome.status === 'failed') this.deps.log?.warn({ delivery: c.msgId, webhook: c.webhookId, reason: outcome.disable }, 'webhook subscription disabled');
      })
      .catch((err: unknown) => this.deps.log?.error({ err, delivery: c.msgId }, 'webhook attempt could not be recorded; it is made again when its claim runs out'))
      .finally(() => this.recording.delete(recorded));
    this.recording.add(recorded);
  }

  /** Records an attempt's outcome together with those that end within FINISH_BATCH_MS of it. */
  private record(item: Finished): Promise<void> {
    return new Promise((resolve, reject) => {
      this.finishing.push({ ...item, resolve, reject });
      this.flushTimer ??= setTimeout(() => void this.flush(), FINISH_BATCH_MS);
    });
  }

  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    const batch = this.finishing.splice(0);
    const store = this.own.store;
    const now = nowIso();
    try {
      await finishAttempts(store, this.node, batch, now);
      for (const b of batch) b.resolve();
    } catch {
      // One that cannot be recorded (its subscription was deleted meanwhile) must not hold back the others.
      for (const b of batch) await finishAttempts(store, this.node, [b], now).then(b.resolve, b.reject);
    }
  }

  /** Stops claiming, lets attempts in flight finish for a while, then abandons the rest to be retried. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.renewal);
    this.wake();
    await this.loop;
    const grace = setTimeout(() => this.stopAttempts.abort(), this.options.graceMs ?? 5000);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(grace);
    await Promise.allSettled([...this.recording]);
    this.sender.close();
    await this.signal.close();
    await this.own.close();
  }
}
