import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Executor } from '../db/database.ts';
import type { CredentialUsageTable } from '../db/tables.ts';
import { addUsage, deleteUsageBefore } from './usage.repository.ts';

const HOUR_MS = 3_600_000;
/** Rows written per statement. */
const CHUNK = 500;

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
  private pending = new Map<string, CredentialUsageTable>();
  private flushing: Promise<void> = Promise.resolve();

  get size(): number {
    return this.pending.size;
  }

  count(credentialId: number, rateLimited: boolean, now = Date.now()): void {
    const hour = hourOf(now);
    const key = `${credentialId}|${hour}`;
    const at = new Date(now).toISOString();
    const row = this.pending.get(key);
    if (row) {
      row.requests += 1;
      row.rate_limited += rateLimited ? 1 : 0;
      if (at > row.last_request_at) row.last_request_at = at;
    } else {
      this.pending.set(key, { credential_id: credentialId, hour, requests: 1, rate_limited: rateLimited ? 1 : 0, last_request_at: at });
    }
  }

  /** Writes what was counted since the last flush; flushes run one after another, never two at once. */
  flush(db: Executor): Promise<void> {
    const run = this.flushing.then(() => this.write(db));
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async write(db: Executor): Promise<void> {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    for (let i = 0; i < rows.length; i += CHUNK) {
      try {
        await addUsage(db, rows.slice(i, i + CHUNK));
      } catch (error) {
        // What was not written goes back, added to whatever was counted meanwhile.
        for (const row of rows.slice(i)) this.putBack(row);
        throw error;
      }
    }
  }

  private putBack(row: CredentialUsageTable): void {
    const key = `${row.credential_id}|${row.hour}`;
    const now = this.pending.get(key);
    if (!now) return void this.pending.set(key, row);
    now.requests += row.requests;
    now.rate_limited += row.rate_limited;
    if (row.last_request_at > now.last_request_at) now.last_request_at = row.last_request_at;
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
  api.addHook('onResponse', async (request, reply) => {
    if (request.grant) counter.count(request.grant.credentialId, reply.statusCode === 429);
  });
}

/** Hours of usage kept: the console shows the last 24; a week leaves room to look back. */
export const USAGE_KEPT_MS = 7 * 24 * HOUR_MS;

export const pruneUsage = (db: Executor, now = Date.now()): Promise<number> => deleteUsageBefore(db, hourOf(now - USAGE_KEPT_MS));
