import { isPostgres, typesFor, type MigrationDb } from './column-types.ts';

/**
 * Snapshots (bulk exports as jobs, docs/snapshots.md): the jobs, and their files in the database as chunks of
 * about 1 MiB, so that every node of a PostgreSQL cluster serves every file and SQLite keeps them in its one file.
 */
export async function up(db: MigrationDb): Promise<void> {
  const t = typesFor(await isPostgres(db));
  await t.id(db.schema.createTable('snapshots'))
    // The credential that asked; only it sees the job. No foreign key: a deleted credential's jobs expire like the others.
    .addColumn('credential_id', t.bigId, (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    // JSON: the listing filters (raw strings, as a query string has them) and the fields, or null for all.
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('fields', 'text')
    // queued | running | completed | failed | expired
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rows', t.bigId, (c) => c.notNull().defaultTo(0))
    // The changes-feed position of the view the file was read from.
    .addColumn('seq', t.bigId)
    .addColumn('size', t.bigId)
    .addColumn('sha256', 'text')
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('expires_at', 'text')
    // The node running it and until when its claim holds; a node that dies stops renewing, and the job goes back to the queue.
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'text')
    .execute();
  await db.schema.createIndex('snapshots_status').on('snapshots').columns(['status', 'id']).execute();
  await db.schema.createIndex('snapshots_credential').on('snapshots').columns(['credential_id', 'id']).execute();

  await db.schema.createTable('snapshot_chunks')
    .addColumn('snapshot_id', t.bigId, (c) => c.notNull().references('snapshots.id').onDelete('cascade'))
    .addColumn('n', 'integer', (c) => c.notNull())
    .addColumn('bytes', t.pg ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('snapshot_chunks_pk', ['snapshot_id', 'n'])
    .execute();
}

export async function down(db: MigrationDb): Promise<void> {
  for (const table of ['snapshot_chunks', 'snapshots']) await db.schema.dropTable(table).ifExists().execute();
}
