import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

// On PostgreSQL a migration's ALTER TABLE waits for every transaction that has read the table (an export streaming
// it), and every later query of the table queues behind the waiting ALTER. Migrations bound that wait
// (MIGRATION_LOCK in src/db/migrate.ts): they give up, change nothing, are tried again, and then say why.
const later = {
  '2099-01-01-001-a-column': {
    up: async (db: Kysely<unknown>) => {
      await db.schema.alterTable('brands').addColumn('motto', 'text').execute();
    },
  },
};
const lock = { timeoutMs: 300, attempts: 2, pauseMs: 100 };

if ((await dialects()).includes('postgres')) {
  describe('migrations on PostgreSQL while another session holds a table', { timeout: 30_000 }, () => {
    let database: TestDatabase;
    let holder: pg.Client;

    before(async () => {
      database = await createTestDatabase('postgres');
      holder = new pg.Client({ connectionString: database.url });
      await holder.connect();
    });
    after(async () => {
      await holder.end();
      await database.drop();
    });

    const columns = async () => (await sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'brands'`.execute(database.store.db)).rows.map((r) => r.name);

    it('give up after their lock timeout, change nothing, and let the table be read meanwhile; once it is free they run', async () => {
      // What an export's transaction holds while it streams the table.
      await holder.query('begin');
      await holder.query('select count(*) from brands');
      const started = Date.now();
      const reads: number[] = [];
      const reading = (async () => {
        // Reads of the table while the migration waits: each would queue behind an unbounded ALTER TABLE.
        while (Date.now() - started < 600) {
          const at = Date.now();
          await sql`select count(*) from brands`.execute(database.store.db);
          reads.push(Date.now() - at);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await assert.rejects(migrateToLatest(database.store.db, { extra: later, lock }), (err: Error) => {
        assert.match(err.message, /^migration 2099-01-01-001-a-column waited 0.3 s for a table another session holds .*2 times; nothing was changed/);
        assert.equal((err.cause as { code?: string }).code, '55P03');
        return true;
      });
      await reading;
      assert.ok(reads.length > 0);
      assert.ok(!(await columns()).includes('motto'), 'nothing changed');
      const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(database.store.db);
      assert.ok(!applied.rows.some((r) => r.name === '2099-01-01-001-a-column'), 'not recorded as run');
      // No read waited for more than a lock timeout and a pause (an unbounded ALTER would hold them until the holder ends).
      assert.ok(Math.max(...reads) < lock.timeoutMs + lock.pauseMs + 500, `reads took up to ${Math.max(...reads)} ms`);

      await holder.query('commit');
      await migrateToLatest(database.store.db, { extra: later, lock });
      assert.ok((await columns()).includes('motto'), 'run once the table is free');
    });

    it('wait for a lock held for less than their timeout, and run', async () => {
      await holder.query('begin');
      await holder.query('lock table categories in access share mode');
      const release = setTimeout(() => void holder.query('commit'), 100);
      const more = { ...later, '2099-01-01-002-another': { up: async (db: Kysely<unknown>) => db.schema.alterTable('categories').addColumn('motto', 'text').execute() } };
      try {
        await migrateToLatest(database.store.db, { extra: more, lock: { ...lock, timeoutMs: 5_000 } });
      } finally {
        clearTimeout(release);
      }
      const r = await sql<{ n: number }>`select count(*)::int as n from information_schema.columns where table_schema = current_schema() and table_name = 'categories' and column_name = 'motto'`.execute(database.store.db);
      assert.equal(r.rows[0].n, 1);
    });
  });
}
