import { randomBytes } from 'node:crypto';
import { nowIso, type Executor } from '../../db/database.ts';
import type { WebhookTable } from '../../db/tables.ts';
import { AppError, notFound } from '../../errors/app-error.ts';
import { headSeq } from '../log.ts';
import { EVENT_TYPES, MAX_PATTERNS, parsePatterns, patternProblem, unknownPatterns } from './patterns.ts';
import { checkTargetUrl, TargetRefused } from './ssrf.ts';

type Row = Omit<WebhookTable, 'id'> & { id: number };

/** A subscription as the admin API and the CLI show it (never with its secret). */
export interface Webhook {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export interface WebhookInput {
  url?: string;
  events?: string[] | string;
  description?: string | null;
  enabled?: boolean;
}

/** 32 random bytes in the Standard Webhooks form, which every Standard Webhooks library accepts. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;

export function toWebhook(row: Row, now = nowIso()): Webhook {
  return {
    id: Number(row.id),
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: Boolean(row.enabled),
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    previousSecretExpiresAt: row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_expires_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const invalid = (name: string, reason: string) => new AppError('invalid_body', `${name} ${reason}.`, { errors: [{ name, reason }] });

async function checkUrl(url: string, allowPrivate: boolean): Promise<string> {
  try {
    return (await checkTargetUrl(url, allowPrivate)).toString();
  } catch (err) {
    if (err instanceof TargetRefused) throw invalid('url', err.message);
    throw err;
  }
}

function checkEvents(raw: string[] | string, eventTypes: readonly string[]): string[] {
  const patterns = parsePatterns(raw);
  if (patterns.length === 0) throw invalid('events', 'must name at least one event type or pattern');
  if (patterns.length > MAX_PATTERNS) throw invalid('events', `has more than ${MAX_PATTERNS} patterns`);
  for (const p of patterns) {
    const problem = patternProblem(p);
    if (problem) throw invalid('events', problem);
  }
  const unknown = unknownPatterns(patterns, eventTypes);
  if (unknown.length) throw invalid('events', `has patterns that match no event type: ${unknown.join(', ')}`);
  return patterns;
}

async function findRow(db: Executor, id: number): Promise<Row> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Webhook ${id}`);
  return row;
}

/** `eventTypes`: the store's catalogue (`ctx.resources.eventTypes`), which patterns must match. */
export async function createWebhook(db: Executor, input: WebhookInput & { url: string; events: string[] | string }, allowPrivate: boolean, eventTypes: readonly string[] = EVENT_TYPES): Promise<WebhookWithSecret> {
  const url = await checkUrl(input.url, allowPrivate);
  const events = checkEvents(input.events, eventTypes);
  const now = nowIso();
  const secret = newWebhookSecret();
  const inserted = await db
    .insertInto('webhooks')
    .values({ url, events: JSON.stringify(events), description: input.description ?? null, secret, enabled: input.enabled === false ? 0 : 1, from_seq: await headSeq(db), created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { ...toWebhook(await findRow(db, Number(inserted.id))), secret };
}

export async function listWebhooks(db: Executor): Promise<Webhook[]> {
  const now = nowIso();
  return (await db.selectFrom('webhooks').selectAll().orderBy('id').execute()).map((r) => toWebhook(r, now));
}

export async function getWebhook(db: Executor, id: number): Promise<Webhook> {
  return toWebhook(await findRow(db, id));
}

/**
 * Changes the fields given. Enabling a disabled subscription clears why it was disabled, and it gets the
 * events from then on (its pending deliveries resume; `replay` with `since` sends what happened meanwhile).
 */
export async function updateWebhook(db: Executor, id: number, input: WebhookInput, allowPrivate: boolean, eventTypes: readonly string[] = EVENT_TYPES): Promise<Webhook> {
  const row = await findRow(db, id);
  const set: Partial<Row> = { updated_at: nowIso() };
  if (input.url !== undefined) set.url = await checkUrl(input.url, allowPrivate);
  if (input.events !== undefined) set.events = JSON.stringify(checkEvents(input.events, eventTypes));
  if (input.description !== undefined) set.description = input.description;
  if (input.enabled === true && !row.enabled) Object.assign(set, { enabled: 1, disabled_reason: null, disabled_at: null, from_seq: await headSeq(db) });
  if (input.enabled === false) Object.assign(set, { enabled: 0, disabled_reason: 'disabled by the administrator', disabled_at: set.updated_at });
  await db.updateTable('webhooks').set(set).where('id', '=', id).execute();
  return getWebhook(db, id);
}

export async function deleteWebhook(db: Executor, id: number): Promise<void> {
  await findRow(db, id);
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/**
 * Issues a new secret. For `overlapSeconds` deliveries carry signatures by both the new and the old
 * secret, so receivers can switch without losing a message; 0 retires the old secret at once.
 */
export async function rotateWebhookSecret(db: Executor, id: number, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<WebhookWithSecret> {
  const row = await findRow(db, id);
  const now = new Date();
  const secret = newWebhookSecret();
  await db
    .updateTable('webhooks')
    .set({
      secret,
      previous_secret: overlapSeconds > 0 ? row.secret : null,
      previous_secret_expires_at: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000).toISOString() : null,
      updated_at: now.toISOString(),
    })
    .where('id', '=', id)
    .execute();
  return { ...(await getWebhook(db, id)), secret };
}
