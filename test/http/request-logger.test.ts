import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import type { Dialect } from '../../src/db/database.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

interface Line {
  level: number;
  msg: string;
  requestId?: string;
  [key: string]: unknown;
}

/** The app at a log level, its lines captured, with one route that logs at warn (as a handler does on a problem). */
async function appAt(dialect: Dialect, level: string): Promise<{ app: FastifyInstance; lines: Line[]; database: TestDatabase }> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({ DATABASE_URL: database.url, ADMIN_TOKEN, PUBLIC_URL: 'http://store.test' }, {});
  const ctx = await createContext(config, database.store);
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  const app = await buildApp(ctx, { logger: { level, stream } });
  app.get('/test/warns', (request, reply) => {
    request.log.warn({ detail: 'x' }, 'something to look at');
    request.log.debug('below the level');
    return reply.send({ ok: true });
  });
  app.get('/test/child', (request, reply) => {
    request.log.child({ part: 'export' }).warn('from a child');
    return reply.send({ ok: true });
  });
  await app.ready();
  return { app, lines, database };
}

for (const dialect of await dialects()) {
  describe(`request logging (${dialect})`, () => {
    describe('at info', () => {
      let t: Awaited<ReturnType<typeof appAt>>;
      before(async () => (t = await appAt(dialect, 'info')));
      after(async () => {
        await t.app.close();
        await t.database.drop();
      });

      it('writes one line per request, bound to its request id', async () => {
        const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-info-1' } });
        assert.equal(res.statusCode, 200);
        const mine = t.lines.filter((l) => l.requestId === 'trace-info-1');
        assert.deepEqual(mine.map((l) => [l.msg, l.status, l.url]), [['request', 200, '/healthz']]);
      });
    });

    describe('at warn', () => {
      let t: Awaited<ReturnType<typeof appAt>>;
      before(async () => (t = await appAt(dialect, 'warn')));
      after(async () => {
        await t.app.close();
        await t.database.drop();
      });

      it('writes nothing for a request that logs nothing, and a handler line with its request id and fields', async () => {
        const quiet = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-warn-1' } });
        assert.equal(quiet.statusCode, 200);
        assert.equal(t.lines.length, 0, 'no line for a request that logs nothing');
        const loud = await t.app.inject({ method: 'GET', url: '/test/warns', headers: { 'x-request-id': 'trace-warn-2' } });
        assert.equal(loud.statusCode, 200);
        assert.deepEqual(t.lines.map((l) => [l.level, l.msg, l.requestId, l.detail]), [[40, 'something to look at', 'trace-warn-2', 'x']]);
      });

      it("a child of the request's logger keeps the request id", async () => {
        t.lines.length = 0;
        const res = await t.app.inject({ method: 'GET', url: '/test/child', headers: { 'x-request-id': 'trace-warn-3' } });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(t.lines.map((l) => [l.msg, l.requestId, l.part]), [['from a child', 'trace-warn-3', 'export']]);
      });
    });
  });
}
