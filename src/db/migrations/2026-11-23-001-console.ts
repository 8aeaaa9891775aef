import { isPostgres, typesFor, type MigrationDb } from './column-types.ts';

/**
 * The administrator's console: its sign-in sessions, kept in the database so that every node of a
 * PostgreSQL cluster accepts them (only a keyed hash of a session id is stored), and the per-credential
 * usage counters, one row per credential and hour that nodes add their counts into.
 */
export async function up(db: MigrationDb): Promise<void> {
  const t = typesFor(await isPostgres(db));

  await db.schema.createTable('console_sessions')
    // HMAC of the session id (and of the admin token it was opened with); the id itself is only in the cookie.
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // Slides forward with use, never past created_at plus the longest session.
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_expires').on('console_sessions').column('expires_at').execute();

  await db.schema.createTable('credential_usage')
    // No foreign key: counts of a credential deleted before its node flushed them must not fail the batch
    // they travel in; rows of deleted credentials are simply never shown and are pruned with age.
    .addColumn('credential_id', t.bigId, (c) => c.notNull())
    // The hour the counts fall in, as an ISO timestamp truncated to the hour (sorts as text).
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('requests', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', t.bigId, (c) => c.notNull().defaultTo(0))
    .addColumn('last_request_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('credential_usage_pk', ['credential_id', 'hour'])
    .execute();
  await db.schema.createIndex('credential_usage_hour').on('credential_usage').column('hour').execute();
}

export async function down(db: MigrationDb): Promise<void> {
  for (const table of ['credential_usage', 'console_sessions']) await db.schema.dropTable(table).ifExists().execute();
}
