import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { readDirect } from '../../src/db/database.ts';
import { keptBuilders, MAX_BUILDERS, objectRows, rowBuilder } from '../../src/db/row-builders.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

/** Rows are made from arrays by a function per column list (row-builders.ts): they must be the drivers' own objects. */
describe('rows built from arrays', () => {
  it('keeps odd names as own properties, never as code or as the prototype', () => {
    const names = ['id', '__proto__', 'a"}; throw new Error("ran"); ({"', 'x\\\\"', 'line\nbreak', '7', 'id'];
    const row = rowBuilder(names)([1, { polluted: true }, 'quoted', 'slashes', 'newline', 'seven', 2]);
    assert.equal(Object.getPrototypeOf(row), Object.prototype, '__proto__ is a column, not the prototype');
    assert.equal((row as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, { polluted: true });
    assert.equal(row['a"}; throw new Error("ran"); ({"'], 'quoted');
    assert.equal(row['x\\\\"'], 'slashes');
    assert.equal(row['line\nbreak'], 'newline');
    // A name given twice keeps its last value, in its first place, as the drivers' objects do; integer names come first.
    assert.equal(row.id, 2);
    assert.deepEqual(Object.keys(row), ['7', 'id', '__proto__', 'a"}; throw new Error("ran"); ({"', 'x\\\\"', 'line\nbreak']);
  });

  it("finds a statement's builder by its text, and looks again when its columns change", () => {
    const sql = 'select a test statement';
    assert.deepEqual(objectRows(sql, () => ['a', 'b'], [[1, 2], [3, 4]], 2), [{ a: 1, b: 2 }, { a: 3, b: 4 }]);
    assert.deepEqual(objectRows(sql, () => assert.fail('known: the names are not read again'), [[5, 6]], 2), [{ a: 5, b: 6 }]);
    assert.deepEqual(objectRows(sql, () => ['a', 'b', 'c'], [[1, 2, 3]], 3), [{ a: 1, b: 2, c: 3 }]);
    assert.deepEqual(objectRows(sql, () => assert.fail('no rows, no builder'), [], 3), []);
  });

  it('keeps at most MAX_BUILDERS of each, whatever column lists clients ask for', () => {
    for (let i = 0; i <= MAX_BUILDERS + 5; i++) assert.deepEqual(objectRows(`select statement ${i}`, () => [`c${i}`], [[i]], 1), [{ [`c${i}`]: i }]);
    assert.deepEqual(keptBuilders(), { byColumns: MAX_BUILDERS, byStatement: MAX_BUILDERS });
  });
});

for (const dialect of await dialects()) {
  describe(`a direct read gives the rows Kysely's driver gives (${dialect})`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(() => database.drop());

    it('for every column type the listing reads, nulls, and quoted names', async () => {
      const { db } = database.store;
      const sql = dialect === 'postgres'
        ? `select 1::int4 as id, 'ž"''s'::text as name, 12.5::numeric as price, true as "active", null::text as "note", 9007199254740991::int8 as "x""y", '2026-11-28T10:00:00Z'::timestamptz as updated_at union all select 2, null, null, false, 'p', 1, '2026-11-29T10:00:00Z'`
        : `select 1 as id, 'ž"''s' as name, '12.50' as price, 1 as "active", null as "note", 9007199254740991 as "x""y", '2026-11-28' as updated_at union all select 2, null, null, 0, 'p', 1, '2026-11-29'`;
      const query = CompiledQuery.raw(sql, []);
      for (let i = 0; i < 2; i++) {
        const direct = (await readDirect(db, query)) as Array<Record<string, unknown>>;
        const through = (await db.executeQuery<Record<string, unknown>>(query)).rows;
        // (A column named __proto__ is left out: better-sqlite3 sets it as the row's prototype, ours keep it a column.)
        assert.deepEqual(direct, through);
        assert.deepEqual(direct.map((r) => Object.keys(r)), through.map((r) => Object.keys(r)));
        assert.equal(Object.getPrototypeOf(direct[1]), Object.prototype);
      }
    });
  });
}
