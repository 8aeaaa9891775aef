import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { isConnectionLoss } from '../../src/db/connection-loss.ts';
import { createPgPool } from '../../src/db/database.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';
import { createTestDatabase, dialects, PG_URL, type TestDatabase } from '../helpers/databases.ts';
import { closedPort } from '../helpers/ports.ts';

/**
 * Every way pg reports a lost or unobtainable connection must become a 503 problem with Retry-After (a
 * passing condition), and nothing else may: the errors below are raised by pg itself against real sockets
 * and a real PostgreSQL where that can be arranged, and built the way pg builds them where it cannot (a
 * server in recovery, a network failure mid-query).
 */

async function failureOf(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

/** pg's DatabaseError as its protocol parser builds it from an ErrorResponse. */
function reported(code: string, severity: string, message: string): pg.DatabaseError {
  return Object.assign(new pg.DatabaseError(message, 0, 'error'), { code, severity });
}

const usesPostgres = (await dialects()).includes('postgres');

describe('connection-loss errors become 503 with Retry-After', () => {
  const errors: Array<[string, Error]> = [];
  let app: FastifyInstance;
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  let database: TestDatabase | undefined;
  let pgAdmin: pg.Client | undefined;

  before(async () => {
    app = Fastify({ logger: false });
    registerErrorHandling(app, 'http://store.test');
    app.get('/fail/:i', async (request) => {
      throw errors[Number((request.params as { i: string }).i)][1];
    });
    await app.ready();
    // Accepts connections and never answers: a database host that hangs.
    silent = net.createServer((s) => void sockets.add(s)).listen(0, '127.0.0.1');
    await new Promise((r) => silent.once('listening', r));
    if (usesPostgres) {
      database = await createTestDatabase('postgres');
      pgAdmin = new pg.Client({ connectionString: PG_URL });
      await pgAdmin.connect();
    }

    const refused = createPgPool({ host: '127.0.0.1', port: await closedPort(), user: 'x', database: 'x' });
    errors.push(['connection refused', await failureOf(() => refused.connect())]);
    await refused.end();

    const hanging = createPgPool({ host: '127.0.0.1', port: (silent.address() as net.AddressInfo).port, user: 'x', database: 'x', connectionTimeoutMillis: 150 });
    errors.push(['no answer within the connect timeout', await failureOf(() => hanging.connect())]);
    await hanging.end();

    if (database) {
      const dbName = new URL(database.url).pathname.slice(1);
      const pool = createPgPool({ connectionString: database.url, max: 1, connectionTimeoutMillis: 150 });
      const held = await pool.connect();
      errors.push(['no free pooled connection within the timeout', await failureOf(() => pool.connect())]);

      // Sessions ended by an operator: a query in flight, and a client checked out between queries (whose
      // 'error' event, unlistened, used to end the process).
      const running = failureOf(() => held.query('select pg_sleep(10)'));
      const other = createPgPool({ connectionString: database.url });
      const between = await other.connect();
      await new Promise((r) => setTimeout(r, 100));
      await pgAdmin!.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [dbName]);
      errors.push(['terminated during a query (57P01)', await running]);
      await new Promise((r) => setTimeout(r, 100));
      errors.push(['a query on a client that lost its connection', await failureOf(() => between.query('select 1'))]);
      held.release(new Error('lost'));
      between.release(new Error('lost'));
      await pool.end();
      await other.end();

      // A database that does not take connections now (FATAL 55000).
      await pgAdmin!.query(`alter database ${dbName} allow_connections false`);
      const refusing = createPgPool({ connectionString: database.url });
      errors.push(['database not accepting connections', await failureOf(() => refusing.connect())]);
      await pgAdmin!.query(`alter database ${dbName} allow_connections true`);
      await refusing.end();
    }

    errors.push(
      ['socket closed under a client', new Error('Connection terminated unexpectedly')],
      ['crash shutdown (57P02)', reported('57P02', 'FATAL', 'terminating connection because of crash of another server process')],
      ['starting up (57P03)', reported('57P03', 'FATAL', 'the database system is starting up')],
      ['too many connections (53300)', reported('53300', 'FATAL', 'sorry, too many clients already')],
      ['connection failure (08006)', reported('08006', 'ERROR', 'connection failure')],
      ['connection exception (08000)', reported('08000', 'ERROR', 'connection exception')],
      ['reset by peer', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    );
    assert.equal(errors.length, database ? 13 : 9);
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
    await pgAdmin?.end();
    await database?.drop();
    await app.close();
  });

  it('answers each with a 503 problem and Retry-After', async () => {
    for (const [i, [what, error]] of errors.entries()) {
      assert.equal(isConnectionLoss(error), true, `${what}: ${error.message}`);
      const res = await app.inject({ method: 'GET', url: `/fail/${i}` });
      assert.equal(res.statusCode, 503, `${what}: ${res.body}`);
      assert.ok(Number(res.headers['retry-after']) >= 1, `${what}: Retry-After`);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const body = res.json();
      assert.equal(body.code, 'service_unavailable');
      assert.doesNotMatch(body.detail, /ECONN|57P|terminat|timeout|127\.0\.0\.1/, `${what}: the cause stays in the logs`);
    }
  });

  it('leaves other errors alone', () => {
    const others: Array<[string, Error]> = [
      ['a syntax error', reported('42601', 'ERROR', 'syntax error at or near "selec"')],
      ['a serialization failure', reported('40001', 'ERROR', 'could not serialize access')],
      ['a unique violation', reported('23505', 'ERROR', 'duplicate key value')],
      ['a bug', new TypeError('Cannot read properties of undefined')],
      ['a message that only mentions the words', new Error('Connection terminated unexpectedly, said the user')],
    ];
    for (const [what, error] of others) assert.equal(isConnectionLoss(error), false, what);
  });
});
