import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { openStore } from '../../src/db/database.ts';
import { WriteQueue } from '../../src/db/write-queue.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { classify } from '../../src/http/error-handler.ts';
import { inTransaction } from '../../src/events/transaction.ts';
import { brands } from '../../src/modules/brands/resource.ts';
import { appRegistry } from '../../src/modules/registry.ts';
import { updateItem } from '../../src/resources/writer.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

/** A promise with its resolver, to hold a writer in its slot until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('the write queue', () => {
  it('runs at most `slots` writers at once and admits the others in arrival order', async () => {
    const queue = new WriteQueue(2, 60_000);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const runs = gates.map((g, i) => queue.run(async () => {
      started.push(i);
      await g.promise;
      return i;
    }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(queue.load, { running: 2, waiting: 3 });
    gates[1].open();
    await runs[1];
    assert.deepEqual(started, [0, 1, 2]);
    for (const g of gates) g.open();
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4]);
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });

  it('a writer that fails gives its slot back', async () => {
    const queue = new WriteQueue(1, 60_000);
    await assert.rejects(queue.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await queue.run(async () => 'next'), 'next');
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });

  it('a writer that waited too long, or finds the line full, is refused as busy (503 with Retry-After)', async () => {
    const queue = new WriteQueue(1, 50, 1);
    const held = gate();
    const first = queue.run(() => held.promise);
    const waiting = queue.run(async () => 'never');
    const refused = await queue.run(async () => 'never').then(() => undefined, (e: unknown) => e);
    assert.ok(refused instanceof AppError && refused.code === 'service_unavailable' && refused.headers['retry-after']);
    const late = await waiting.then(() => undefined, (e: unknown) => e);
    assert.ok(late instanceof AppError && late.code === 'service_unavailable');
    assert.deepEqual(queue.load, { running: 1, waiting: 0 });
    held.open();
    await first;
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });
});

/**
 * The bound of DATABASE_WRITE_WAIT_MS on a real database: a write that cannot get its lock in time (a row
 * another transaction holds on PostgreSQL, the file another process writes on SQLite) is a 503 with
 * Retry-After, and the database is left as it was.
 */
for (const dialect of await dialects()) {
  describe(`a write that waits past DATABASE_WRITE_WAIT_MS (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
      await seedStore(db.store, { products: 2, orders: 0, seed: 4 });
    });
    after(() => db.drop());

    /** Another connection that holds brand 1 (PostgreSQL: its row; SQLite: the write lock) until released. */
    async function holdBrand(): Promise<() => Promise<void>> {
      if (dialect === 'sqlite') {
        const other = new SQLite(db.store.sqlitePath!);
        other.exec('begin immediate');
        return async () => { other.exec('rollback'); other.close(); };
      }
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query('begin');
      await client.query('select id from brands where id = 1 for update');
      return async () => { await client.query('rollback'); await client.end(); };
    }

    it('answers 503 with Retry-After once the bound has passed', async () => {
      const impatient = openStore(db.url, { writeWaitMs: 150 });
      const release = await holdBrand();
      try {
        const error = await inTransaction(impatient, undefined, (w) => updateItem(w, appRegistry(), brands, 1, { description: 'late' })).then(() => undefined, (e: unknown) => e as Error);
        assert.ok(error, 'the write must not succeed while the lock is held');
        const problem = classify(error);
        assert.equal(problem.code, 'service_unavailable', String(error));
        assert.ok(problem.headers?.['retry-after']);
      } finally {
        await release();
      }
      // Free again: the same store writes.
      assert.equal((await inTransaction(impatient, undefined, (w) => updateItem(w, appRegistry(), brands, 1, { description: 'in time' }))).description, 'in time');
      await impatient.close();
    });
  });
}
