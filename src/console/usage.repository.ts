import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { CredentialUsageTable } from '../db/tables.ts';

/**
 * Adds counts to their (credential, hour) rows: an upsert that adds rather than sets, so that every node's
 * flush of the same hour sums up, whichever comes first, on SQLite and PostgreSQL alike.
 */
export async function addUsage(db: Executor, rows: CredentialUsageTable[]): Promise<void> {
  await db.insertInto('credential_usage').values(rows)
    .onConflict((oc) => oc.columns(['credential_id', 'hour']).doUpdateSet({
      requests: sql<number>`credential_usage.requests + excluded.requests`,
      rate_limited: sql<number>`credential_usage.rate_limited + excluded.rate_limited`,
      last_request_at: sql<string>`case when excluded.last_request_at > credential_usage.last_request_at then excluded.last_request_at else credential_usage.last_request_at end`,
    }))
    .execute();
}

export interface HourUsage {
  credentialId: number;
  hour: string;
  requests: number;
  rateLimited: number;
}

/** Every (credential, hour) row from `sinceHour` on. */
export async function usageSince(db: Executor, sinceHour: string): Promise<HourUsage[]> {
  const rows = await db.selectFrom('credential_usage').select(['credential_id', 'hour', 'requests', 'rate_limited']).where('hour', '>=', sinceHour).execute();
  // pg returns bigint as text: numbers at the edge.
  return rows.map((r) => ({ credentialId: Number(r.credential_id), hour: r.hour, requests: Number(r.requests), rateLimited: Number(r.rate_limited) }));
}

/** Each credential's last counted request (over the rows kept). */
export async function lastRequests(db: Executor): Promise<Map<number, string>> {
  const rows = await db.selectFrom('credential_usage').select(['credential_id', (eb) => eb.fn.max('last_request_at').as('last')]).groupBy('credential_id').execute();
  return new Map(rows.map((r) => [Number(r.credential_id), String(r.last)]));
}

export async function deleteUsageBefore(db: Executor, hour: string): Promise<number> {
  const result = await db.deleteFrom('credential_usage').where('hour', '<', hour).executeTakeFirst();
  return Number(result.numDeletedRows);
}
