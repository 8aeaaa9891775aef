import { createHash } from 'node:crypto';
import type { Executor, Store } from '../../db/database.ts';
import { getSetting, setSetting } from '../../db/settings.ts';
import { eventMatcher } from './patterns.ts';

/** The last event seq turned into deliveries. */
const FANOUT_CURSOR = 'webhooks_fanout_seq';
export const FANOUT_BATCH = 500;

/**
 * The message id of an event for a subscription: derived, not drawn, so that fanning the same event out
 * again (after a crash lost a fan-out whose commit was not flushed yet, see dispatcher-store.ts) gives the
 * id already sent. The subscription's creation time keeps ids of different stores apart.
 */
export const messageId = (webhookId: number, createdAt: string, seq: number): string =>
  `msg_${createHash('sha256').update(`${webhookId}:${createdAt}:${seq}`).digest('hex').slice(0, 26)}`;

/** The Standard Webhooks body `{ type, timestamp, data }`; `data` is spliced in as the log stored it. */
export const webhookPayload = (type: string, occurredAt: string, data: string): string =>
  `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(occurredAt)},"data":${data}}`;

interface EventRow { seq: number; type: string; occurred_at: string; data: string }
interface SigningRow { secret: string; previous_secret: string | null; previous_secret_expires_at: string | null }
interface Target extends SigningRow { id: number; url: string; created_at: string; from_seq: number; matches: (type: string) => boolean }

/** The secrets deliveries are signed with now: the current one, and the previous one during a rotation. */
const secretsOf = (s: SigningRow, at: string): string[] =>
  s.previous_secret && s.previous_secret_expires_at && s.previous_secret_expires_at > at ? [s.secret, s.previous_secret] : [s.secret];

/** Where the fanning node takes the first attempts itself: its free slots, leased to it as a claim would. */
export interface Take {
  node: string;
  limit: number;
  leaseMs: number;
}

async function insertDeliveries(db: Executor, targets: Target[], events: EventRow[], now: string, take: Take | undefined): Promise<{ claimed: Claimed[]; inserted: number }> {
  const until = take ? new Date(Date.parse(now) + take.leaseMs).toISOString() : null;
  const rows = events.flatMap((e) =>
    targets
      .filter((s) => Number(e.seq) > s.from_seq && s.matches(e.type))
      .map((s) => ({
        msg_id: messageId(s.id, s.created_at, Number(e.seq)), webhook_id: s.id, event_seq: Number(e.seq), event_type: e.type, payload: webhookPayload(e.type, e.occurred_at, e.data),
        status: 'pending', attempts: 0, next_attempt_at: now, created_at: now, updated_at: now, locked_by: null as string | null, locked_until: null as string | null,
      })),
  );
  for (const row of rows.slice(0, take?.limit ?? 0)) Object.assign(row, { locked_by: take!.node, locked_until: until });
  const byId = new Map(targets.map((t) => [t.id, t]));
  const claimed: Claimed[] = [];
  let count = 0;
  for (let i = 0; i < rows.length; i += 200) {
    const inserted = await db.insertInto('webhook_deliveries').values(rows.slice(i, i + 200)).onConflict((oc) => oc.columns(['webhook_id', 'event_seq']).doNothing())
      .returning(['id', 'msg_id', 'webhook_id', 'payload', 'locked_by']).execute();
    count += inserted.length;
    for (const r of inserted) {
      if (!take || r.locked_by !== take.node) continue;
      const t = byId.get(Number(r.webhook_id))!;
      claimed.push({ id: Number(r.id), msgId: r.msg_id, webhookId: t.id, payload: r.payload, attempts: 0, url: t.url, secrets: secretsOf(t, now) });
    }
  }
  return { claimed, inserted: count };
}

/** With `hold` (PostgreSQL), a subscription being deleted meanwhile waits until its deliveries are inserted, and is then deleted with them. */
async function enabledTargets(db: Executor, hold: boolean): Promise<Target[]> {
  let query = db.selectFrom('webhooks').select(['id', 'url', 'events', 'from_seq', 'created_at', 'secret', 'previous_secret', 'previous_secret_expires_at']).where('enabled', '=', 1);
  if (hold) query = query.forKeyShare();
  const subs = await query.execute();
  return subs.map((s) => ({ ...s, id: Number(s.id), from_seq: Number(s.from_seq), matches: eventMatcher(JSON.parse(s.events) as string[]) }));
}

/** Whether any subscription is enabled: without one the dispatcher has nothing to do. */
export async function anyEnabled(db: Executor): Promise<boolean> {
  return (await db.selectFrom('webhooks').select('id').where('enabled', '=', 1).limit(1).executeTakeFirst()) !== undefined;
}

const cursorRowMade = new WeakSet<Store>();

/**
 * Turns events after the fan-out cursor into one pending delivery per matching enabled subscription, and
 * moves the cursor, in one transaction: a crash leaves either both or neither. Events commit in seq order,
 * so a cursor never passes an event that is still to commit. With `take`, the first deliveries are made
 * already claimed by the fanning node (most deliveries need one attempt; this spares each a claim). Returns
 * how many events it read (a full batch means there may be more), the deliveries it took, and how many it
 * inserted without taking them (they wait for a claim). On PostgreSQL
 * only one node fans out at a time (it holds the cursor row); the others skip.
 */
export async function fanOut(store: Store, now: string, take?: Take, batch = FANOUT_BATCH): Promise<{ read: number; claimed: Claimed[]; unclaimed: number }> {
  const none = { read: 0, claimed: [], unclaimed: 0 };
  if (store.dialect === 'postgres' && !cursorRowMade.has(store)) {
    await store.db.insertInto('settings').values({ key: FANOUT_CURSOR, value: '' }).onConflict((oc) => oc.column('key').doNothing()).execute();
    cursorRowMade.add(store);
  }
  return store.db.transaction().execute(async (trx) => {
    let stored: string | undefined;
    if (store.dialect === 'postgres') {
      // The cursor row, locked to commit, is the baton: a node that finds it taken leaves the work to its holder.
      const row = await trx.selectFrom('settings').select('value').where('key', '=', FANOUT_CURSOR).forUpdate().skipLocked().executeTakeFirst();
      if (!row) return none;
      stored = row.value || undefined;
    } else stored = await getSetting(trx, FANOUT_CURSOR);
    const events = await trx.selectFrom('events').select(['seq', 'type', 'occurred_at', 'data']).where('seq', '>', Number(stored ?? 0)).orderBy('seq').limit(batch).execute();
    if (events.length === 0) return none;
    // Subscriptions are read after the events: one made in between starts after those events anyway
    // (its from_seq is the head when it was made), while one read first could miss events read later.
    const targets = await enabledTargets(trx, store.dialect === 'postgres');
    // Nothing listens: no work, and no write (the cursor catches up when a subscription exists again).
    if (targets.length === 0) return none;
    // After a time without subscriptions the cursor is far behind: jump over what no subscription wants.
    const wantedAfter = Math.min(...targets.map((t) => t.from_seq));
    if (wantedAfter >= Number(events[events.length - 1].seq)) {
      await setSetting(trx, FANOUT_CURSOR, String(wantedAfter));
      return { read: batch, claimed: [], unclaimed: 0 };
    }
    const { claimed, inserted } = await insertDeliveries(trx, targets, events, now, take);
    await setSetting(trx, FANOUT_CURSOR, String(events[events.length - 1].seq));
    return { read: events.length, claimed, unclaimed: inserted - claimed.length };
  });
}

/** A delivery taken by this node for one attempt, with what it needs to send it. */
export interface Claimed {
  id: number;
  msgId: string;
  webhookId: number;
  payload: string;
  attempts: number;
  url: string;
  secrets: string[];
}

/**
 * Takes up to `limit` due deliveries for one attempt each, leased to `node` until `leaseMs` from now. On
 * PostgreSQL `FOR UPDATE SKIP LOCKED` lets nodes claim side by side without ever taking the same row; a
 * claimed row is invisible to others until its lease ends (a node that died mid-attempt) or it is released.
 */
export async function claimDue(store: Store, node: string, limit: number, leaseMs: number, now = new Date()): Promise<Claimed[]> {
  if (limit <= 0) return [];
  const at = now.toISOString();
  const until = new Date(now.getTime() + leaseMs).toISOString();
  return store.db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select('d.id')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', at)
      .where('w.enabled', '=', 1)
      .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', at)]))
      .orderBy('d.next_attempt_at')
      .limit(limit);
    if (store.dialect === 'postgres') due = due.forUpdate('d').skipLocked();
    const ids = (await due.execute()).map((r) => Number(r.id));
    if (ids.length === 0) return [];
    const rows = await trx
      .updateTable('webhook_deliveries')
      .set({ locked_until: until, locked_by: node })
      .where('id', 'in', ids)
      .returning(['id', 'msg_id', 'webhook_id', 'payload', 'attempts'])
      .execute();
    const subs = await trx.selectFrom('webhooks').select(['id', 'url', 'secret', 'previous_secret', 'previous_secret_expires_at']).where('id', 'in', [...new Set(rows.map((r) => Number(r.webhook_id)))]).execute();
    const byId = new Map(subs.map((s) => [Number(s.id), s]));
    return rows.map((r) => {
      const s = byId.get(Number(r.webhook_id))!;
      return { id: Number(r.id), msgId: r.msg_id, webhookId: Number(r.webhook_id), payload: r.payload, attempts: Number(r.attempts), url: s.url, secrets: secretsOf(s, at) };
    });
  });
}

/** When the next unclaimed pending delivery of an enabled subscription falls due, if any. */
export async function nextDueAt(db: Executor, now = new Date().toISOString()): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
    .where('d.status', '=', 'pending')
    .where('w.enabled', '=', 1)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', now)]))
    .executeTakeFirst();
  return row?.at ?? undefined;
}

export interface AttemptRecord {
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  response: string | null;
}

export type Outcome = { status: 'delivered' } | { status: 'retry'; at: string } | { status: 'failed'; disable?: string };

export interface Finished {
  c: Claimed;
  attempt: AttemptRecord;
  outcome: Outcome;
}

/**
 * Logs attempts and moves their deliveries on, in one transaction (attempts that end together are
 * recorded together). An update only applies while this node still holds the claim, so a lease that ran
 * out and was taken over is not overwritten. Attempts for a subscription deleted while they were in
 * flight are dropped: its deliveries went with it, and there is nothing left to record them against.
 */
export async function finishAttempts(store: Store, node: string, items: Finished[], now: string): Promise<void> {
  if (items.length === 0) return;
  await store.db.transaction().execute(async (trx) => {
    // The subscriptions still there, held (on PostgreSQL) against a delete until this commits: a delete
    // that got in first has taken the deliveries with it; one that comes after waits for these rows.
    let alive = trx.selectFrom('webhooks').select('id').where('id', 'in', [...new Set(items.map((i) => i.c.webhookId))]);
    if (store.dialect === 'postgres') alive = alive.forKeyShare();
    const kept = new Set((await alive.execute()).map((r) => Number(r.id)));
    items = items.filter((i) => kept.has(i.c.webhookId));
    if (items.length === 0) return;
    await trx.insertInto('webhook_attempts').values(items.map(({ c, attempt }) => ({
      delivery_id: c.id, webhook_id: c.webhookId, attempt: c.attempts + 1, started_at: attempt.startedAt, duration_ms: attempt.durationMs,
      status_code: attempt.statusCode, error: attempt.error, response: attempt.response, node,
    }))).execute();
    const unclaim = { locked_until: null, locked_by: null, updated_at: now };
    // The common case, many deliveries answered with the same 2xx, is one statement.
    const delivered = new Map<number, number[]>();
    for (const { c, attempt, outcome } of items) {
      if (outcome.status === 'delivered') delivered.set(attempt.statusCode ?? 200, [...(delivered.get(attempt.statusCode ?? 200) ?? []), c.id]);
    }
    for (const [status, ids] of delivered) {
      await trx.updateTable('webhook_deliveries')
        .set((eb) => ({ ...unclaim, status: 'delivered', attempts: eb('attempts', '+', 1), next_attempt_at: now, last_status: status, last_error: null, delivered_at: now }))
        .where('id', 'in', ids).where('locked_by', '=', node).execute();
    }
    for (const { c, attempt, outcome } of items) {
      if (outcome.status === 'delivered') continue;
      await trx.updateTable('webhook_deliveries')
        .set({ ...unclaim, status: outcome.status === 'retry' ? 'pending' : 'failed', attempts: c.attempts + 1, next_attempt_at: outcome.status === 'retry' ? outcome.at : now, last_status: attempt.statusCode, last_error: attempt.error })
        .where('id', '=', c.id).where('locked_by', '=', node).execute();
      if (outcome.status === 'failed' && outcome.disable) {
        await trx.updateTable('webhooks').set({ enabled: 0, disabled_reason: outcome.disable, disabled_at: now, updated_at: now }).where('id', '=', c.webhookId).where('enabled', '=', 1).execute();
      }
    }
  });
}

/** Extends the claims `node` holds, for attempts still in flight. */
export async function renewClaims(db: Executor, node: string, until: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ locked_until: until }).where('locked_by', '=', node).where('status', '=', 'pending').execute();
}

/** Gives a claimed delivery back untried (the node is stopping), so any node takes it at once. */
export async function release(db: Executor, c: Claimed, node: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ locked_until: null, locked_by: null }).where('id', '=', c.id).where('locked_by', '=', node).execute();
}

/** Deletes finished deliveries (and their attempts) last touched before `before`; pending ones stay. */
export async function pruneDeliveries(db: Executor, before: string): Promise<number> {
  const result = await db.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('updated_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
