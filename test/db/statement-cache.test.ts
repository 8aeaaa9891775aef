import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../../src/db/statement-cache.ts';

describe('SQLite statement cache', () => {
  it('prepares a query once and reuses the statement; closing closes the connection', () => {
    const conn = new SQLite(':memory:');
    const cached = withStatementCache(conn);
    const a = cached.prepare('select 1 as x');
    assert.equal(cached.prepare('select 1 as x'), a);
    assert.notEqual(cached.prepare('select 2 as x'), a);
    cached.close();
    assert.equal(conn.open, false);
  });

  it('gives a fresh statement while the kept one is busy in an iteration', () => {
    const conn = new SQLite(':memory:');
    const cached = withStatementCache(conn);
    const sql = 'select value from json_each(?)';
    const kept = cached.prepare(sql);
    const rows = kept.iterate(['[1, 2, 3]']);
    assert.deepEqual(rows.next().value, { value: 1 });
    const fresh = cached.prepare(sql);
    assert.notEqual(fresh, kept);
    assert.deepEqual(fresh.all(['[7]']), [{ value: 7 }]);
    assert.deepEqual([...rows], [{ value: 2 }, { value: 3 }]);
    assert.equal(cached.prepare(sql), kept, 'once the iteration ends the kept statement serves again');
    cached.close();
  });
});
