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
}

function describe(tokens: number, allowed: boolean, policy: Policy): Take {
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((policy.burst - tokens) / policy.rps)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / policy.rps)),
  };
}

/** Buckets of one process: right for SQLite, where one node serves the store. */
export class MemoryBuckets implements BucketStore {
  private readonly buckets = new Map<string, { tokens: number; ts: number }>();

  async take(key: string, policy: Policy): Promise<Take> {
    const now = Date.now();
    const bucket = this.buckets.get(key) ?? { tokens: policy.burst, ts: now };
    const refilled = Math.min(policy.burst, bucket.tokens + ((now - bucket.ts) / 1000) * policy.rps);
    const allowed = refilled >= 1;
    bucket.tokens = allowed ? refilled - 1 : refilled;
    bucket.ts = now;
    this.buckets.set(key, bucket);
    return describe(bucket.tokens, allowed, policy);
  }
}

/**
 * Buckets in PostgreSQL, shared by every node of the store: one atomic upsert per request, timed by the
 * database clock so that nodes with skewed clocks agree. The table is UNLOGGED: no WAL, no fsync.
 */
export class PostgresBuckets implements BucketStore {
  constructor(private readonly store: Store) {}

  async take(key: string, policy: Policy): Promise<Take> {
    const now = sql`(extract(epoch from clock_timestamp()) * 1000)`;
    const refilled = sql`least(${policy.burst}::float8, b.tokens + (${now} - b.ts) / 1000.0 * ${policy.rps}::float8)`;
    const result = await sql<{ tokens: number; allowed: number }>`
      insert into rate_buckets as b (key, tokens, ts, allowed) values (${key}, ${policy.burst - 1}::float8, ${now}, 1)
      on conflict (key) do update set
        tokens = case when ${refilled} >= 1 then ${refilled} - 1 else ${refilled} end,
        allowed = case when ${refilled} >= 1 then 1 else 0 end,
        ts = ${now}
      returning tokens, allowed`.execute(this.store.db);
    const row = result.rows[0];
    return describe(Number(row.tokens), row.allowed === 1, policy);
  }
}

export const bucketStoreFor = (store: Store): BucketStore => (store.dialect === 'postgres' ? new PostgresBuckets(store) : new MemoryBuckets());

/** The IETF RateLimit-Policy and RateLimit header values (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(policy: Policy, take: Take): Record<string, string> {
  const window = Math.max(1, Math.ceil(policy.burst / policy.rps));
  return {
    'ratelimit-policy': `"${policy.name}";q=${policy.burst};w=${window}`,
    ratelimit: `"${policy.name}";r=${take.remaining};t=${take.resetSeconds}`,
  };
}
