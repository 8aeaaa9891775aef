import { nowIso, type Executor } from '../../db/database.ts';
import type { WebhookAttemptTable, WebhookDeliveryTable } from '../../db/tables.ts';
import { AppError, notFound } from '../../errors/app-error.ts';
import { messageId, webhookPayload } from './outbox.ts';
import { eventMatcher } from './patterns.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery as the admin API and the CLI show it. */
export interface Delivery {
  id: number;
  /** The `webhook-id` header: the same on every attempt and replay. */
  messageId: string;
  webhookId: number;
  eventSeq: number;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Attempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  response: string | null;
  node: string;
}

type DeliveryRow = Omit<WebhookDeliveryTable, 'id'> & { id: number };
type AttemptRow = Omit<WebhookAttemptTable, 'id'> & { id: number };

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: Number(r.id), messageId: r.msg_id, webhookId: Number(r.webhook_id), eventSeq: Number(r.event_seq), eventType: r.event_type, status: r.status,
  attempts: Number(r.attempts), nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null, lastStatus: r.last_status === null ? null : Number(r.last_status),
  lastError: r.last_error, deliveredAt: r.delivered_at, createdAt: r.created_at, updatedAt: r.updated_at,
});

const toAttempt = (r: AttemptRow): Attempt => ({
  attempt: Number(r.attempt), startedAt: r.started_at, durationMs: Number(r.duration_ms), statusCode: r.status_code === null ? null : Number(r.status_code), error: r.error, response: r.response, node: r.node,
});

export interface DeliveryPage {
  data: Delivery[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
}

/** Deliveries of a subscription, newest first; `cursor` is the id of the last one of the previous page. */
export async function listDeliveries(db: Executor, webhookId: number, q: { status?: DeliveryStatus; limit?: number; cursor?: number } = {}): Promise<DeliveryPage> {
  const limit = q.limit ?? 50;
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id', 'desc').limit(limit + 1);
  if (q.status) query = query.where('status', '=', q.status);
  if (q.cursor !== undefined) query = query.where('id', '<', q.cursor);
  const rows = await query.execute();
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit).map(toDelivery);
  return { data, pagination: { limit, nextCursor: hasMore ? String(data[data.length - 1].id) : null, hasMore } };
}

async function findDelivery(db: Executor, webhookId: number, ref: string | number): Promise<DeliveryRow> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  q = typeof ref === 'number' || /^\d+$/.test(ref) ? q.where('id', '=', Number(ref)) : q.where('msg_id', '=', ref);
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(`Delivery ${ref} of webhook ${webhookId}`);
  return row;
}

/** One delivery with every attempt made for it. */
export async function getDelivery(db: Executor, webhookId: number, ref: string | number): Promise<Delivery & { attemptLog: Attempt[] }> {
  const row = await findDelivery(db, webhookId, ref);
  const attempts = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row.id).orderBy('id').execute();
  return { ...toDelivery(row), attemptLog: attempts.map(toAttempt) };
}

export interface ReplayRequest {
  /** One delivery, by id or message id (`msg_…`). */
  delivery?: string | number;
  /** Every event since this instant that the subscription's patterns match, whether sent before or not. */
  since?: string;
}

/** Queues deliveries again, with their message ids unchanged. Without a selector: every failed one. */
export async function replay(db: Executor, webhookId: number, r: ReplayRequest): Promise<{ queued: number }> {
  const sub = await db.selectFrom('webhooks').select(['id', 'events', 'created_at']).where('id', '=', webhookId).executeTakeFirst();
  if (!sub) throw notFound(`Webhook ${webhookId}`);
  const now = nowIso();
  const again = { status: 'pending', attempts: 0, next_attempt_at: now, delivered_at: null, updated_at: now };
  const requeue = db.updateTable('webhook_deliveries').set(again).where('webhook_id', '=', webhookId).where('status', '!=', 'pending');

  if (r.delivery !== undefined) {
    const row = await findDelivery(db, webhookId, r.delivery);
    if (row.status === 'pending') {
      await db.updateTable('webhook_deliveries').set({ next_attempt_at: now, updated_at: now }).where('id', '=', row.id).execute();
    } else await requeue.where('id', '=', row.id).execute();
    return { queued: 1 };
  }
  if (r.since === undefined) {
    const result = await requeue.where('status', '=', 'failed').executeTakeFirst();
    return { queued: Number(result.numUpdatedRows) };
  }

  const since = new Date(r.since);
  if (Number.isNaN(since.getTime())) throw new AppError('invalid_body', 'since is not a date-time.', { errors: [{ name: 'since', reason: 'must be an RFC 3339 date-time' }] });
  const matches = eventMatcher(JSON.parse(sub.events) as string[]);
  const events = (await db.selectFrom('events').select(['seq', 'type', 'occurred_at', 'data']).where('occurred_at', '>=', since.toISOString()).orderBy('seq').execute()).filter((e) => matches(e.type));
  let queued = 0;
  for (let i = 0; i < events.length; i += 200) {
    const chunk = events.slice(i, i + 200);
    const seqs = chunk.map((e) => Number(e.seq));
    const existing = await db.selectFrom('webhook_deliveries').select(['event_seq', 'status']).where('webhook_id', '=', webhookId).where('event_seq', 'in', seqs).execute();
    const known = new Set(existing.map((e) => Number(e.event_seq)));
    queued += Number((await requeue.where('event_seq', 'in', seqs).executeTakeFirst()).numUpdatedRows);
    queued += existing.filter((e) => e.status === 'pending').length;
    const fresh = chunk.filter((e) => !known.has(Number(e.seq))).map((e) => ({
      msg_id: messageId(webhookId, sub.created_at, Number(e.seq)), webhook_id: webhookId, event_seq: Number(e.seq), event_type: e.type, payload: webhookPayload(e.type, e.occurred_at, e.data),
      status: 'pending', attempts: 0, next_attempt_at: now, created_at: now, updated_at: now,
    }));
    if (fresh.length) await db.insertInto('webhook_deliveries').values(fresh).onConflict((oc) => oc.columns(['webhook_id', 'event_seq']).doNothing()).execute();
    queued += fresh.length;
  }
  return { queued };
}
