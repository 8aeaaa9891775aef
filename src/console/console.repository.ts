import type { Executor } from '../db/database.ts';

/** Unexpired tokens per credential. */
export async function liveTokenCounts(db: Executor, now: string): Promise<Map<number, number>> {
  const rows = await db.selectFrom('tokens').select(['credential_id', (eb) => eb.fn.countAll().as('n')]).where('expires_at', '>', now).groupBy('credential_id').execute();
  return new Map(rows.map((r) => [Number(r.credential_id), Number(r.n)]));
}

/** The answer excerpt (or error) of the latest attempt of each of these deliveries. */
export async function lastAnswers(db: Executor, deliveryIds: number[]): Promise<Map<number, { response: string | null; error: string | null }>> {
  if (deliveryIds.length === 0) return new Map();
  const latest = db.selectFrom('webhook_attempts').select((eb) => eb.fn.max('id').as('id')).where('delivery_id', 'in', deliveryIds).groupBy('delivery_id');
  const rows = await db.selectFrom('webhook_attempts').select(['delivery_id', 'response', 'error']).where('id', 'in', latest).execute();
  return new Map(rows.map((r) => [Number(r.delivery_id), { response: r.response, error: r.error }]));
}

/** Failed deliveries of a subscription (what "replay all failed" would queue). */
export async function failedCount(db: Executor, webhookId: number): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('n')).where('webhook_id', '=', webhookId).where('status', '=', 'failed').executeTakeFirst();
  return Number(row?.n ?? 0);
}
