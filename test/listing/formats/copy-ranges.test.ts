import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../../src/db/database.ts';
import { plan } from '../../../src/listing/engine.ts';
import { openExportConnection, type ExportConnection } from '../../../src/listing/formats/connection.ts';
import { streamExport } from '../../../src/listing/formats/stream.ts';
import { RESOURCES } from '../../../src/modules/registry.ts';
import { seedStore } from '../../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../helpers/databases.ts';

const products = RESOURCES.find((r) => r.collection === 'products')!;
const orders = RESOURCES.find((r) => r.collection === 'orders')!;

/** The bytes of a stream. */
async function bytesOf(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** The connection with a count of the siblings it gave. */
function counted(conn: ExportConnection): { conn: ExportConnection; siblings: () => number } {
  let n = 0;
  const sibling = conn.sibling!;
  conn.sibling = async () => {
    const s = await sibling();
    if (s) n += 1;
    return s;
  };
  return { conn, siblings: () => n };
}

for (const dialect of (await dialects()).filter((d) => d === 'postgres')) {
  describe(`an export's COPY in ranges on two connections (${dialect})`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let store: Store;
    const checkedOut = () => store.pgPool!.totalCount - store.pgPool!.idleCount;

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: 400, orders: 120 });
      store = database.store;
    });
    after(() => database.drop());

    it('reads one snapshot on both: a write committed between its ranges is in none of them', async () => {
      const p = plan(products, { filters: {} }, 'k');
      const before = await (async () => {
        const conn = await openExportConnection(store, 'ranges test');
        try {
          return await bytesOf(await streamExport(conn, products, p, undefined, { format: 'ndjson' }));
        } finally {
          await conn.close();
        }
      })();
      const { conn, siblings } = counted(await openExportConnection(store, 'ranges test'));
      const write = async (id: number) => {
        await store.db.updateTable('products').set({ name: 'Changed during the export' }).where('id', '>', id).execute();
        await store.db.deleteFrom('product_parameters').where('product_id', '=', id).execute();
        await store.db.deleteFrom('product_filters').where('product_id', '=', id).execute();
        await store.db.deleteFrom('products').where('id', '=', id).execute();
      };
      try {
        // After the export's snapshot was taken and before its second connection opens: only the snapshot it
        // imports keeps these out of the ranges it reads.
        await write(390);
        const stream = await streamExport(conn, products, p, undefined, { format: 'ndjson', ranging: { rows: 50 } });
        // And while the ranges after the first are still to run.
        await write(380);
        const during = await bytesOf(stream);
        assert.equal(siblings(), 1, 'a second connection read ranges');
        assert.ok(during.equals(before), 'the export is the view it began with');
        assert.equal(during.toString('utf8').split('\n').length - 1, 400);
      } finally {
        await conn.close();
      }
      const afterwards = await openExportConnection(store, 'ranges test');
      try {
        const now = (await bytesOf(await streamExport(afterwards, products, p, undefined, { format: 'ndjson', ranging: { rows: 50 } }))).toString('utf8');
        assert.equal(now.split('\n').length - 1, 398);
        assert.match(now, /Changed during the export/);
      } finally {
        await afterwards.close();
      }
    });

    it('gives both connections back when the export stops halfway, and when it fails', async () => {
      const base = checkedOut();
      const conn = await openExportConnection(store, 'ranges test');
      const stream = await streamExport(conn, orders, plan(orders, { filters: {} }, 'k'), undefined, { format: 'csv', ranging: { rows: 10 } });
      // Read a little, so that ranges are under way on both, then stop.
      for await (const _chunk of stream) break;
      stream.destroy();
      await conn.close();
      assert.equal(checkedOut(), base, 'no connection is kept');
      const sessions = await sql<{ n: string }>`select count(*) as n from pg_stat_activity where application_name = 'ranges test'`.execute(store.db);
      assert.equal(Number(sessions.rows[0].n), 0, 'no export session is left');
    });

    it('takes a second connection only while a quarter of the pool stays free for the app', async () => {
      const small = openStore(database.url, { pgPoolSize: 4 });
      const held: Array<{ release(): void }> = [];
      try {
        const p = plan(products, { filters: {} }, 'k');
        const one = counted(await openExportConnection(small, 'ranges test'));
        try {
          // The export's own and two more: a sibling would leave none of the four free.
          for (let i = 0; i < 2; i++) held.push(await small.pgPool!.connect());
          const text = await bytesOf(await streamExport(one.conn, products, p, undefined, { format: 'csv', ranging: { rows: 50 } }));
          assert.equal(one.siblings(), 0);
          assert.equal(text.toString('utf8').split('\r\n').length - 2, 398, 'the ranges ran one after another on its own connection');
        } finally {
          await one.conn.close();
        }
        for (const c of held.splice(0)) c.release();
        const two = counted(await openExportConnection(small, 'ranges test'));
        try {
          await bytesOf(await streamExport(two.conn, products, p, undefined, { format: 'csv', ranging: { rows: 50 } }));
          assert.equal(two.siblings(), 1);
        } finally {
          await two.conn.close();
        }
      } finally {
        for (const c of held) c.release();
        await small.close();
      }
    });
  });
}
