import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { isConnectionLoss } from '../../src/db/connection-loss.ts';
import { createPgPool } from '../../src/db/database.ts';
import { queryArrays, queryArraysOn } from '../../src/db/pg-array-query.ts';
import { dialects, PG_URL } from '../helpers/databases.ts';

/** The listing engine's PostgreSQL reads (pg-array-query.ts) must answer as pg's own `pool.query` does. */
const TYPES = `select 1::int as i, 9007199254740993::int8 as big, 'a''b'::text as t, null::text as nothing, true as yes,
  12.50::numeric as n, '{"k":[1,2]}'::json as j, timestamptz '2026-11-28 10:00:00+00' as at, 'x' as "__proto__", 2 as "i"`;

describe('rows as arrays on PostgreSQL', { skip: !(await dialects()).includes('postgres') && 'no PostgreSQL', timeout: 30_000 }, () => {
  let pool: pg.Pool;
  before(() => {
    pool = createPgPool({ connectionString: PG_URL, max: 1 });
  });
  after(() => pool.end());

  const pgOwn = async (text: string, values: unknown[], name?: string) => {
    const r = await pool.query({ ...(name ? { name } : {}), text, values, rowMode: 'array' });
    return { rows: r.rows as unknown[][], fields: r.fields };
  };

  it("answers pg's own rows and fields: unnamed, named (again: parsed once), with values and without", async () => {
    const text = `${TYPES} where $1::int > 0`;
    for (const name of [undefined, 'pg_array_query_test', 'pg_array_query_test']) {
      const ours = await queryArrays(pool, name, text, [1]);
      const theirs = await pgOwn(text, [1], name);
      assert.deepEqual(ours.rows, theirs.rows);
      assert.deepEqual(ours.fields, theirs.fields);
      assert.deepEqual(ours.rows, [[1, 9007199254740992, "a'b", null, true, '12.50', { k: [1, 2] }, new Date('2026-11-28T10:00:00Z'), 'x', 2]]);
    }
    // No values and no name: pg's simple protocol.
    assert.deepEqual((await queryArrays(pool, undefined, TYPES, [])).rows, (await pgOwn(TYPES, [])).rows);
    const many = await queryArrays(pool, undefined, 'select g, g::text from generate_series(1, 500) g', []);
    assert.equal(many.rows.length, 500);
    assert.deepEqual(many.rows[499], [500, '500']);
    assert.deepEqual((await queryArrays(pool, undefined, 'select 1 where false', [])).rows, []);
  });

  it("rejects with PostgreSQL's error and gives the connection back, every time", async () => {
    // One connection in the pool: a failed query that kept it would leave the next one waiting forever.
    const pid = (await queryArrays(pool, undefined, 'select pg_backend_pid()', [])).rows[0][0];
    for (let i = 0; i < 3; i++) {
      await assert.rejects(queryArrays(pool, undefined, 'select 1 / $1::int', [0]), (e: Error & { code?: string }) => e.code === '22012');
      await assert.rejects(queryArrays(pool, 'pg_array_query_bad', 'select nonsense from', []), (e: Error & { code?: string }) => e.code === '42601');
    }
    assert.deepEqual((await queryArrays(pool, undefined, 'select $1::int + 1', [1])).rows, [[2]]);
    // As pool.query does: a connection a query failed on is closed, not reused.
    assert.notEqual((await queryArrays(pool, undefined, 'select pg_backend_pid()', [])).rows[0][0], pid);
    assert.equal(pool.totalCount - pool.idleCount, 0, 'nothing checked out');
  });

  it("on a client its caller holds (an export's), answers the same and leaves the client to the caller", async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const text = `${TYPES} where $1::int > 0`;
      assert.deepEqual((await queryArraysOn(client, undefined, text, [1])).rows, (await client.query({ text, values: [1], rowMode: 'array' })).rows);
      await assert.rejects(queryArraysOn(client, undefined, 'select 1 / $1::int', [0]), (e: Error & { code?: string }) => e.code === '22012');
      // Still the caller's: the failed statement aborted its transaction, which it ends itself.
      await assert.rejects(client.query('select 1'), (e: Error & { code?: string }) => e.code === '25P02');
      await client.query('rollback');
      assert.deepEqual((await queryArraysOn(client, undefined, 'select 5', [])).rows, [[5]]);
    } finally {
      client.release();
    }
  });

  it('rejects as a lost connection when its backend is ended mid-query, and the pool goes on', async () => {
    const admin = createPgPool({ connectionString: PG_URL, max: 1 });
    try {
      const pid = (await queryArrays(pool, undefined, 'select pg_backend_pid()', [])).rows[0][0];
      const slow = queryArrays(pool, undefined, 'select pg_sleep(5)', []);
      // Wait until the sleep runs, then end its backend as an operator (or a failover) would.
      for (let i = 0; ; i++) {
        const { rows } = await admin.query(`select 1 from pg_stat_activity where pid = $1 and query like 'select pg_sleep%'`, [pid]);
        if (rows.length) break;
        assert.ok(i < 200, 'the sleep never started');
        await new Promise((r) => setTimeout(r, 25));
      }
      await admin.query('select pg_terminate_backend($1)', [pid]);
      await assert.rejects(slow, (e: Error) => isConnectionLoss(e));
      assert.deepEqual((await queryArrays(pool, undefined, 'select 3', [])).rows, [[3]]);
      assert.notEqual((await queryArrays(pool, undefined, 'select pg_backend_pid()', [])).rows[0][0], pid, 'a new connection');
    } finally {
      await admin.end();
    }
  });

  it('rejects as a lost connection when the network drops mid-query (no word from PostgreSQL), and the pool goes on', async () => {
    // A TCP relay to PostgreSQL whose connections this test cuts: a proxy or firewall resetting them.
    const upstream = new URL(PG_URL);
    const links = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
      for (const s of [client, server]) {
        links.add(s);
        s.on('error', () => {});
        s.on('close', () => links.delete(s));
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const url = new URL(PG_URL);
    url.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
    const relayed = createPgPool({ connectionString: url.toString(), max: 1 });
    try {
      const slow = queryArrays(relayed, undefined, 'select pg_sleep(5.1)', []);
      // Cut once the query runs (not while connecting): seen from another connection.
      for (let i = 0; ; i++) {
        const { rows } = await pool.query(`select 1 from pg_stat_activity where query = 'select pg_sleep(5.1)' and state = 'active'`);
        if (rows.length) break;
        assert.ok(i < 200, 'the sleep never started');
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(links.size, 2, 'the query went through the relay');
      for (const s of links) s.resetAndDestroy();
      await assert.rejects(slow, (e: Error) => isConnectionLoss(e));
      assert.deepEqual((await queryArrays(relayed, undefined, 'select 4', [])).rows, [[4]]);
      assert.equal(relayed.totalCount - relayed.idleCount, 0, 'nothing checked out');
    } finally {
      await relayed.end();
      for (const s of links) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });
});
