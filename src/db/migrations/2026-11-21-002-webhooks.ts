import { isPostgres, typesFor, type MigrationDb } from './column-types.ts';

/**
 * Webhook subscriptions, the delivery outbox (one row per event and matching subscription, driven from
 * the database so that a crash loses nothing) and the log of every attempt.
 */
export async function up(db: MigrationDb): Promise<void> {
  const t = typesFor(await isPostgres(db));

  await t.id(db.schema.createTable('webhooks'))
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of event type patterns (`*`, `order.*`, `product.updated`).
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    // During a rotation deliveries are signed with both secrets until previous_secret_expires_at.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'text')
    // Events up to this seq happened before the subscription existed and are not sent to it.
    .addColumn('from_seq', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await t.id(db.schema.createTable('webhook_deliveries'))
    // The Standard Webhooks message id (`webhook-id`), the same on every attempt.
    .addColumn('msg_id', 'text', (c) => c.notNull().unique())
    .addColumn('webhook_id', t.bigId, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_seq', t.bigId, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The body as sent; kept here so that pruning the event log never breaks a retry or a replay.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    // A claim is a lease: a node that dies mid-attempt blocks the row only until then.
    .addColumn('locked_until', 'text')
    .addColumn('locked_by', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_webhook_event', ['webhook_id', 'event_seq'])
    .execute();

  await t.id(db.schema.createTable('webhook_attempts'))
    .addColumn('delivery_id', t.bigId, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', t.bigId, (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response', 'text')
    .addColumn('node', 'text', (c) => c.notNull())
    .execute();

  const index = (name: string, table: string, columns: string[]) => db.schema.createIndex(name).on(table).columns(columns).execute();
  await index('webhook_deliveries_due', 'webhook_deliveries', ['status', 'next_attempt_at']);
  await index('webhook_deliveries_webhook', 'webhook_deliveries', ['webhook_id', 'id']);
  await index('webhook_deliveries_updated', 'webhook_deliveries', ['updated_at']);
  await index('webhook_attempts_delivery', 'webhook_attempts', ['delivery_id', 'id']);
}

export async function down(db: MigrationDb): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhooks']) await db.schema.dropTable(table).ifExists().execute();
}
