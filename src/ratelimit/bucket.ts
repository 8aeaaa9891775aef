import { sql } from 'kysely';
import type { Store } from '../db/database.ts';

export interface Policy {
  name: string;
  rps: number;
  burst: number;
}

export interface Take {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (for Retry-After). */
  retryAfterSeconds: number;
}

export interface BucketStore {
  /** Takes one token from the bucket of `key`, refilling it for the time passed since it was last used. */
  take(key: string, policy: Policy): Promise<Take>;
  /**
   * take(), synchronously when this node can decide alone (a bucket in memory, a lease with tokens left);
   * undefined when it cannot (then call take). The busiest path of the service costs no promise this way.
   */
  takeNow(key: string, policy: Policy): Take | undefined;
}

function describe(tokens: number, allowed: boolean, policy: Policy): Take {
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((policy.burst - tokens) / policy.rps)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / policy.rps)),
  };
}

/**
 * Buckets of one process: right for SQLite, where one node serves the store, and for per-node throttles.
 * Keys may come from clients (source addresses), so the table is bounded: beyond `maxKeys` the least recently
 * used bucket is dropped, which only gives that key a full bucket again (a client needs that many addresses
 * in use at once to gain anything).
 */
export class MemoryBuckets implements BucketStore {
  private readonly buckets = new Map<string, { tokens: number; ts: number }>();

  constructor(readonly maxKeys = 100_000) {}

  get size(): number {
    return this.buckets.size;
  }

  async take(key: string, policy: Policy): Promise<Take> {
    return this.takeNow(key, policy);
  }

  /** take(), synchronously. */
  takeNow(key: string, policy: Policy): Take {
    const now = Date.now();
    const tokens = this.refilled(key, policy, now);
    const allowed = tokens >= 1;
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, ts: now });
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    return describe(allowed ? tokens - 1 : tokens, allowed, policy);
  }

  /** Whether a take would be allowed now, without taking (and without remembering the key). */
  peek(key: string, policy: Policy): Take {
    const tokens = this.refilled(key, policy, Date.now());
    return describe(tokens, tokens >= 1, policy);
  }

  private refilled(key: string, policy: Policy, now: number): number {
    const bucket = this.buckets.get(key);
    return bucket ? Math.min(policy.burst, bucket.tokens + ((now - bucket.ts) / 1000) * policy.rps) : policy.burst;
  }
}

/** How many tokens a node takes from the shared bucket at once: at most 1/20 s of the rate and 1/10 of the burst, at least one. */
export const leaseSize = (policy: Policy): number => Math.max(1, Math.min(1000, Math.floor(policy.rps / 20), Math.floor(policy.burst / 10)));

interface Lease {
  /** Tokens this node took from the shared bucket and has not spent. */
  tokens: number;
  /** What the shared bucket held after the lease was taken. */
  shared: number;
  takenAt: number;
  /** A refill from the database under way, which concurrent requests wait for instead of starting their own. */
  refill?: Promise<void>;
}

// An unspent lease is given back to nobody: it expires, so a node that went quiet does not hold tokens for long.
const LEASE_MS = 1000;
/**
 * Keys may come from clients (source addresses), so rows of buckets idle for a day are deleted now and then.
 * A bucket idle that long is full again under any policy that refills within a day, and a full bucket is
 * what a missing row means.
 */
const IDLE_ROW_MS = 86_400_000;
const PRUNE_EVERY_MS = 600_000;

/**
 * Buckets in PostgreSQL, shared by every node of the store: one atomic upsert, timed by the database clock so
 * that nodes with skewed clocks agree. The table is UNLOGGED: no WAL, no fsync.
 *
 * A node takes tokens in small leases (see leaseSize) and spends them locally, so a busy credential costs one
 * database round trip per lease instead of one per request. The shared bucket still decides: a node never
 * spends a token the bucket did not give it. At the default 20 requests/s a lease is one token, which is the
 * exact per-request behaviour; at high rates a node may hold up to 1/20 s of the rate that another node
 * cannot use until the lease is spent or expires.
 */
export class PostgresBuckets implements BucketStore {
  private readonly leases = new Map<string, Lease>();
  private prunedAt = Date.now();

  constructor(private readonly store: Store) {}

  takeNow(key: string, policy: Policy): Take | undefined {
    this.pruneIdleRows();
    const lease = this.leases.get(key);
    if (lease && lease.tokens >= 1 && Date.now() - lease.takenAt < LEASE_MS) {
      lease.tokens -= 1;
      return describe(lease.shared + lease.tokens, true, policy);
    }
    return undefined;
  }

  async take(key: string, policy: Policy): Promise<Take> {
    for (;;) {
      const now = this.takeNow(key, policy);
      if (now) return now;
      const lease = this.leases.get(key);
      if (lease?.refill) {
        await lease.refill;
        continue;
      }
      const next: Lease = lease ?? { tokens: 0, shared: 0, takenAt: 0 };
      this.leases.set(key, next);
      let granted = 0;
      next.refill = this.lease(key, policy).then(
        (r) => {
          granted = r.granted;
          Object.assign(next, { tokens: r.granted, shared: r.tokens, takenAt: Date.now(), refill: undefined });
        },
        (error: unknown) => {
          next.refill = undefined;
          throw error;
        },
      );
      await next.refill;
      // Nothing granted: this request is refused; waiters retry the bucket themselves.
      if (granted < 1) return describe(next.shared, false, policy);
      if (this.leases.size > 10_000) this.forgetStale();
    }
  }

  /** Takes up to leaseSize tokens from the shared bucket; returns how many it gave and what it holds now. */
  private async lease(key: string, policy: Policy): Promise<{ granted: number; tokens: number }> {
    const want = leaseSize(policy);
    const now = sql`(extract(epoch from clock_timestamp()) * 1000)`;
    // The clock is read once, for the row proposed (`excluded.ts`): clock_timestamp() written in each place would
    // be read again in each, and the bucket would be refilled to one moment and stamped with a later one, losing
    // the tokens of the time between (a test saw 0.012 of a token under load).
    const refilled = sql`least(${policy.burst}::float8, b.tokens + (excluded.ts - b.ts) / 1000.0 * ${policy.rps}::float8)`;
    const grant = sql`least(${want}::float8, floor(${refilled}))`;
    const result = await sql<{ tokens: number; allowed: number }>`
      insert into rate_buckets as b (key, tokens, ts, allowed) values (${key}, ${policy.burst}::float8 - ${Math.min(want, Math.floor(policy.burst))}, ${now}, ${Math.min(want, Math.floor(policy.burst))})
      on conflict (key) do update set
        tokens = ${refilled} - greatest(${grant}, 0),
        allowed = greatest(${grant}, 0),
        ts = excluded.ts
      returning tokens, allowed`.execute(this.store.db);
    const row = result.rows[0];
    return { granted: Number(row.allowed), tokens: Number(row.tokens) };
  }

  private pruneIdleRows(): void {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    // Housekeeping only: when it fails (the database is away), the next round tries again.
    this.pruneIdle().catch(() => {});
  }

  /** Deletes the rows of buckets idle for IDLE_ROW_MS; returns how many. */
  async pruneIdle(): Promise<number> {
    const result = await sql`delete from rate_buckets where ts < extract(epoch from clock_timestamp()) * 1000 - ${IDLE_ROW_MS}`.execute(this.store.db);
    return Number(result.numAffectedRows ?? 0);
  }

  private forgetStale(): void {
    const now = Date.now();
    for (const [key, lease] of this.leases) if (!lease.refill && now - lease.takenAt >= LEASE_MS) this.leases.delete(key);
  }
}

export const bucketStoreFor = (store: Store): BucketStore => (store.dialect === 'postgres' ? new PostgresBuckets(store) : new MemoryBuckets());

/** The IETF RateLimit-Policy and RateLimit header values (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(policy: Policy, take: Take): Record<string, string> {
  return { 'ratelimit-policy': policyHeader(policy), ratelimit: rateLimitHeader(policy, take) };
}

/** The RateLimit header value of one take. */
export const rateLimitHeader = (policy: Policy, take: Take): string => `"${policy.name}";r=${take.remaining};t=${take.resetSeconds}`;

// Policies are few and fixed at start-up; their header is made once each, not per request.
const policyHeaders = new WeakMap<Policy, string>();
/** The RateLimit-Policy header value of a policy. */
export function policyHeader(policy: Policy): string {
  let header = policyHeaders.get(policy);
  if (header === undefined) {
    header = `"${policy.name}";q=${policy.burst};w=${Math.max(1, Math.ceil(policy.burst / policy.rps))}`;
    policyHeaders.set(policy, header);
  }
  return header;
}
