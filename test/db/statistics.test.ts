import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { importFile } from '../../src/import/import.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { analyzedTables, createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

for (const dialect of await dialects()) {
  describe(`statistics after a bulk load (${dialect})`, () => {
    let t: TestDatabase;
    let dir: string;
    before(async () => {
      t = await createTestDatabase(dialect);
      dir = mkdtempSync(join(tmpdir(), 'store-api-statistics-'));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await t?.drop();
    });

    it('an imported file is planned from statistics of it (PostgreSQL)', async () => {
      const path = join(dir, 'brands.jsonl');
      writeFileSync(path, Array.from({ length: 30 }, (_, i) => JSON.stringify({ name: `Imported brand ${i}` })).join('\n'));
      const result = await importFile(t.store, path);
      assert.equal(result.created, 30);
      if (dialect === 'postgres') assert.ok((await analyzedTables(t.store)).has('brands'), 'brands has statistics');
    });

    it('a seeded store is planned from statistics of what was seeded (PostgreSQL), and SQLite is left without any', async () => {
      await seedStore(t.store, { products: 40, orders: 10, seed: 2 });
      if (dialect === 'postgres') {
        const analyzed = await analyzedTables(t.store);
        for (const table of ['products', 'product_parameters', 'product_filters', 'orders', 'order_items', 'brands', 'categories', 'parameters', 'events']) {
          assert.ok(analyzed.has(table), `${table} has statistics: ${[...analyzed].join(', ')}`);
        }
      } else {
        // SQLite uses statistics from the moment ANALYZE creates them: none are created.
        const r = await sql<{ n: number }>`select count(*) as n from sqlite_master where name like 'sqlite_stat%'`.execute(t.store.db);
        assert.equal(Number(r.rows[0].n), 0);
      }
    });
  });
}
