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
  });
}
