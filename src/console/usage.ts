import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Executor } from '../db/database.ts';
import type { CredentialUsageTable } from '../db/tables.ts';
import { addUsage, deleteUsageBefore } from './usage.repository.ts';

const HOUR_MS = 3_600_000;
/** Rows written per statement. */
const CHUNK = 500;

interface Count {
  requests: number;
  rateLimited: number;
  /** The last request, ms since the epoch. */
  last: number;
}

/** The hour an instant falls in, as its ISO timestamp truncated to the hour (how usage rows are keyed). */
export const hourOf = (ms: number): string => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString();

/**
 * Requests per credential and hour, counted in this process and written now and then as additive upserts:
 * a request costs a map update, not a row. Between flushes the map holds one entry per credential and hour
 * that saw requests (credentials are made by the administrator, so it is bounded by them). Counts that fail
 * to be written stay and go with the next flush; counts of a node that crashes between flushes are lost
 * (at most one flush interval's worth: these are statistics, not billing).
 */
export class UsageCounter {
  /** Counts by hour (its start, ms) and credential; numbers only, so that counting a request allocates nothing. */
  private pending = new Map<number, Map<number, Count>>();
  private flushing: Promise<void> = Promise.resolve();

  /** (credential, hour) entries waiting to be written. */
  get size(): number {
    let n = 0;
    for (const hour of this.pending.values()) n += hour.size;
    return n;
  }

  count(credentialId: number, rateLimited: boolean, now = Date.now()): void {
    const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
    let hour = this.pending.get(hourStart);
    if (!hour) this.pending.set(hourStart, (hour = new Map()));
    const c = hour.get(credentialId);
    if (!c) return void hour.set(credentialId, { requests: 1, rateLimited: rateLimited ? 1 : 0, last: now });
    c.requests += 1;
    if (rateLimited) c.rateLimited += 1;
    if (now > c.last) c.last = now;
  }

  /** Writes what was counted since the last flush; flushes run one after another, never two at once. */
  flush(db: Executor): Promise<void> {
    const run = this.flushing.then(() => this.write(db));
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async write(db: Executor): Promise<void> {
    if (this.pending.size === 0) return;
    const taken = this.pending;
    this.pending = new Map();
    const rows: Array<{ hourStart: number; credentialId: number; c: Count }> = [];
    for (const [hourStart, hour] of taken) for (const [credentialId, c] of hour) rows.push({ hourStart, credentialId, c });
    for (let i = 0; i < rows.length; i += CHUNK) {
      try {
        await addUsage(db, rows.slice(i, i + CHUNK).map(({ hourStart, credentialId, c }): CredentialUsageTable => ({
          credential_id: credentialId, hour: new Date(hourStart).toISOString(), requests: c.requests, rate_limited: c.rateLimited, last_request_at: new Date(c.last).toISOString(),
        })));
      } catch (error) {
        // What was not written goes back, added to whatever was counted meanwhile.
        for (const { hourStart, credentialId, c } of rows.slice(i)) this.putBack(hourStart, credentialId, c);
        throw error;
      }
    }
  }

  private putBack(hourStart: number, credentialId: number, back: Count): void {
    let hour = this.pending.get(hourStart);
    if (!hour) this.pending.set(hourStart, (hour = new Map()));
    const c = hour.get(credentialId);
    if (!c) return void hour.set(credentialId, back);
    c.requests += back.requests;
    c.rateLimited += back.rateLimited;
    if (back.last > c.last) c.last = back.last;
  }
}

const counters = new WeakMap<AppContext, UsageCounter>();

/** The usage counter of a running service (one per context: the HTTP hook counts into it, the flusher empties it). */
export function usageOf(ctx: AppContext): UsageCounter {
  let counter = counters.get(ctx);
  if (!counter) counters.set(ctx, (counter = new UsageCounter()));
  return counter;
}

/** Counts every answered request of the plugin it is added to (/api/v2) that carried a valid token, and its 429s. */
export function countUsage(api: FastifyInstance, ctx: AppContext): void {
  const counter = usageOf(ctx);
  // A callback hook, not an async one: the busiest path of the service should not allocate a promise for this.
  api.addHook('onResponse', (request, reply, done) => {
    if (request.grant) counter.count(request.grant.credentialId, reply.statusCode === 429);
    done();
  });
}

/** Hours of usage kept: the console shows the last 24; a week leaves room to look back. */
export const USAGE_KEPT_MS = 7 * 24 * HOUR_MS;

export const pruneUsage = (db: Executor, now = Date.now()): Promise<number> => deleteUsageBefore(db, hourOf(now - USAGE_KEPT_MS));
