import { typesFor, isPostgres, type MigrationDb } from './column-types.ts';

/**
 * The state of this store as a follower of a main store (sync): one row, id 1. The cursor is written in
 * the same transaction as the changes it covers, so a crash never loses or doubles an applied event.
 */
export async function up(db: MigrationDb): Promise<void> {
  const t = typesFor(await isPostgres(db));
  await db.schema.createTable('sync_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('source_url', 'text', (c) => c.notNull())
    // 'snapshot' while copying the listings (restarted from scratch after a crash), then 'following'.
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('cursor_seq', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('snapshot_head', t.bigId)
    .addColumn('head_seq', t.bigId)
    .addColumn('applied_events', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('applied_changes', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('snapshots', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('snapshot_started_at', 'text')
    .addColumn('snapshot_finished_at', 'text')
    .addColumn('last_applied_at', 'text')
    .addColumn('last_event_at', 'text')
    .addColumn('lag_ms', t.bigId)
    .addColumn('last_contact_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: MigrationDb): Promise<void> {
  await db.schema.dropTable('sync_state').ifExists().execute();
}
