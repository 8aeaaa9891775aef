import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getOne, listPage } from '../../src/listing/engine.ts';
import { products } from '../../src/modules/products/resource.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

// listPage and getOne reuse compiled queries; these walk the same query shapes with other values each time.
for (const dialect of await dialects()) {
  describe(`compiled listing queries are reused with each request's own values (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
      await seedStore(db.store, { products: 40, seed: 3 });
    });
    after(() => db.drop());

    it('pages with changing cursors and limits, with and without filters, match the table', async () => {
      for (const [filters, sort] of [[{}, 'id'], [{ status: 'active' }, 'id'], [{ status: 'active,draft' }, '-updatedAt'], [{}, '-id']] as const) {
        let q = db.store.db.selectFrom('products').select(['id', 'status', 'updated_at']);
        if ('status' in filters) q = q.where('status', 'in', filters.status.split(','));
        const direction = sort.startsWith('-') ? 'desc' : 'asc';
        if (sort.endsWith('updatedAt')) q = q.orderBy('updated_at', direction);
        const expected = (await q.orderBy('id', direction).execute()).map((r) => Number(r.id));
        const seen: number[] = [];
        let cursor: string | undefined;
        for (const limit of [3, 3, 5, 2, 7, 7, 1000]) {
          const page = await listPage(db.store.db, products, { limit, cursor, sort: cursor ? undefined : sort, filters: cursor ? {} : { ...filters } }, 'test key');
          assert.ok(page.data.length <= limit);
          seen.push(...page.data.map((r) => Number(r.id)));
          cursor = page.pagination.nextCursor ?? undefined;
          if (!cursor) break;
        }
        assert.deepEqual(seen, expected, `${JSON.stringify(filters)} sorted by ${sort}`);
      }
    });

    it('single items by different ids', async () => {
      const ids = (await db.store.db.selectFrom('products').select(['id', 'article_number']).orderBy('id').limit(3).execute());
      for (const row of ids) assert.equal((await getOne(db.store.db, products, Number(row.id)))?.articleNumber, row.article_number);
      assert.equal(await getOne(db.store.db, products, 999_999), undefined);
    });

    it('a page or item read while a transaction is open does not see its uncommitted writes, and reads after it', async () => {
      const [first] = await db.store.db.selectFrom('products').select(['id', 'name']).orderBy('id').limit(1).execute();
      const id = Number(first.id);
      let reads: Promise<[string | undefined, string | undefined]> | undefined;
      await db.store.db.transaction().execute(async (trx) => {
        await trx.updateTable('products').set({ name: 'uncommitted name' }).where('id', '=', id).execute();
        // Outside the transaction, on the store itself (SQLite: the same connection, read straight when it can).
        reads = Promise.all([
          getOne(db.store.db, products, id).then((item) => item?.name as string | undefined),
          listPage(db.store.db, products, { limit: 1, filters: {} }, 'test key').then((page) => page.data[0]?.name as string | undefined),
        ]);
        // Let the reads start while the transaction is still open, then undo the write.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await trx.updateTable('products').set({ name: first.name }).where('id', '=', id).execute();
      });
      assert.deepEqual(await reads, [first.name, first.name]);
    });
  });
}
