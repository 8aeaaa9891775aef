import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SnapshotSettings } from '../config.ts';
import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import type { EventBus } from '../events/bus.ts';
import { recordEvents } from '../events/log.ts';
import { inTransaction } from '../events/transaction.ts';
import type { Registry } from '../resources/registry.ts';
import { snapshotEvent } from './events.ts';
import { claimNext, completeJob, expireJobs, failJob, forgetJobs, lapsedJobs, renewLease, requeue, type SnapshotJob } from './jobs.repository.ts';
import { produceSnapshot } from './produce.ts';
import { snapshotTables } from './tables.ts';

/** A job that failed this often (its node died each time) fails for good rather than kill node after node. */
export const MAX_ATTEMPTS = 3;
const DAY_MS = 86_400_000;

export interface RunnerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RunnerOptions {
  store: Store;
  bus: EventBus;
  resources: Registry;
  hashKey: string;
  settings: SnapshotSettings;
  log: RunnerLog;
  /** This node's name in claims; unique per process by default. */
  node?: string;
}

const runners = new Set<SnapshotRunner>();

/** Tells this process's runners of `store` that a job was queued, so that one starts at once rather than at its next look. */
export function wakeRunners(store: Store): void {
  for (const r of runners) if (r.store === store) r.wake();
}

/**
 * Runs snapshot jobs on this node: claims queued jobs (one claim per job across nodes, see claimNext) while
 * it runs fewer than SNAPSHOTS_PER_NODE, renews each claim's lease a few times per lease, and writes the
 * outcome and its event in one transaction. Every node also does the housekeeping, harmlessly at once: jobs
 * whose node stopped renewing go back to the queue (or fail after MAX_ATTEMPTS), files past their expiry go.
 */
export class SnapshotRunner {
  readonly store: Store;
  readonly node: string;
  private readonly running = new Map<number, { abort: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private lastHousekeeping = 0;

  constructor(private readonly o: RunnerOptions) {
    this.store = o.store;
    this.node = o.node ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  private get leaseMs(): number {
    return this.o.settings.leaseSeconds * 1000;
  }

  start(): void {
    runners.add(this);
    this.schedule(0);
  }

  /** Stops claiming; jobs running here are put back in the queue at once (another node, or this one after a restart, runs them). */
  async stop(): Promise<void> {
    this.stopped = true;
    runners.delete(this);
    clearTimeout(this.timer);
    await this.ticking;
    for (const r of this.running.values()) r.abort.abort(new Error('the node is stopping'));
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  wake(): void {
    if (!this.stopped && !this.ticking) this.schedule(0);
  }

  /** Jobs running on this node now. */
  get active(): number {
    return this.running.size;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.log.warn({ err }, 'snapshots: looking for jobs failed; trying again'))
        .finally(() => {
          this.ticking = undefined;
          if (!this.stopped) this.schedule(this.o.settings.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (Date.now() - this.lastHousekeeping >= Math.min(this.leaseMs, 10_000)) {
      this.lastHousekeeping = Date.now();
      await this.housekeeping();
    }
    while (!this.stopped && this.running.size < this.o.settings.perNode) {
      const now = new Date();
      const job = await claimNext(this.store, this.node, now.toISOString(), new Date(now.getTime() + this.leaseMs).toISOString());
      if (!job) return;
      this.begin(job);
    }
  }

  /** Lapsed claims back to the queue (or failed), expired files removed, long-finished jobs forgotten. */
  async housekeeping(now = nowIso()): Promise<void> {
    for (const job of await lapsedJobs(this.store.db, now)) {
      if (job.attempts >= MAX_ATTEMPTS) {
        await this.fail(job, undefined, `its node stopped ${job.attempts} times while running it`);
        continue;
      }
      if (await requeue(this.store.db, job.id, now)) this.o.log.warn({ snapshot: job.id, node: job.claimedBy, attempts: job.attempts }, 'snapshots: a job\'s node stopped renewing its claim; queued again');
    }
    const expired = await expireJobs(this.store.db, now);
    if (expired) this.o.log.info({ expired }, 'snapshots: removed expired files');
    await forgetJobs(this.store.db, new Date(Date.parse(now) - 30 * DAY_MS).toISOString());
  }

  private begin(job: SnapshotJob): void {
    const abort = new AbortController();
    let rows = 0;
    const renew = setInterval(() => {
      renewLease(this.store.db, job.id, this.node, new Date(Date.now() + this.leaseMs).toISOString(), rows)
        .then((held) => {
          if (!held) abort.abort(new Error('the claim on the job is gone (deleted, or taken back after a lapse)'));
        })
        .catch((err: unknown) => this.o.log.warn({ err, snapshot: job.id }, 'snapshots: could not renew a claim'));
    }, Math.max(10, this.leaseMs / 3));
    renew.unref();
    const started = Date.now();
    const rate = this.o.settings.maxRowsPerSecond;
    const progress = (n: number): Promise<void> | undefined => {
      rows = n;
      if (!rate) return undefined;
      // Ahead of the allowed pace: the export waits (reads no more rows) until the clock catches up.
      const ahead = started + (n / rate) * 1000 - Date.now();
      return ahead > 0 ? sleep(ahead, undefined, { signal: abort.signal }) : undefined;
    };
    const done = this.execute(job, abort.signal, progress).finally(() => {
      clearInterval(renew);
      this.running.delete(job.id);
      // A place is free: the next queued job need not wait for the next look.
      this.wake();
    });
    this.running.set(job.id, { abort, done });
  }

  private async execute(job: SnapshotJob, signal: AbortSignal, progress: (rows: number) => Promise<void> | undefined): Promise<void> {
    const def = this.o.resources.byCollection.get(job.collection);
    const started = Date.now();
    if (!def) return this.fail(job, this.node, `the collection ${job.collection} no longer exists`);
    try {
      const produced = await produceSnapshot(this.store, def, job, this.o.hashKey, signal, progress);
      const finishedAt = nowIso();
      const expiresAt = new Date(Date.parse(finishedAt) + this.o.settings.ttlDays * DAY_MS).toISOString();
      await inTransaction(this.store, this.o.bus, async (w) => {
        const completed = await completeJob(w.trx, job.id, this.node, { ...produced, finishedAt, expiresAt });
        if (completed) await recordEvents(w, [snapshotEvent('snapshot.completed', completed)]);
      });
      this.o.log.info({ snapshot: job.id, collection: job.collection, format: job.format, rows: produced.rows, bytes: produced.size, seq: produced.seq, ms: Date.now() - started }, 'snapshots: completed');
    } catch (err) {
      if (signal.aborted) {
        // Stopping: the job goes back to the queue now rather than after its lease.
        const reason = signal.reason as Error;
        this.o.log.info({ snapshot: job.id, reason: reason.message }, 'snapshots: a job was interrupted');
        await snapshotTables(this.store.db).updateTable('snapshots').set({ status: 'queued', claimed_by: null, lease_until: null, rows: 0 })
          .where('id', '=', job.id).where('claimed_by', '=', this.node).where('status', '=', 'running').execute().catch(() => undefined);
        return;
      }
      this.o.log.error({ err, snapshot: job.id }, 'snapshots: a job failed');
      await this.fail(job, this.node, err instanceof Error ? err.message : String(err)).catch((e: unknown) => this.o.log.error({ err: e, snapshot: job.id }, 'snapshots: could not record a failure'));
    }
  }

  private async fail(job: SnapshotJob, node: string | undefined, error: string): Promise<void> {
    await inTransaction(this.store, this.o.bus, async (w) => {
      const failed = await failJob(w.trx, job.id, node, error, w.now);
      if (failed) await recordEvents(w, [snapshotEvent('snapshot.failed', failed)]);
    });
  }
}
