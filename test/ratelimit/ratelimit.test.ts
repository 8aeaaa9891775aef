import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createContext } from '../../src/context.ts';
import type { Store } from '../../src/db/database.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

const BURST = 5;
// One token a second: refills during a burst of quick requests stay below one token.
const RPS = 1;

/** `"default";r=3;t=1` → { name: 'default', r: 3, t: 1 } (an IETF structured-field item with parameters). */
function parseItem(value: unknown): { name: string; params: Record<string, number> } {
  const [name, ...params] = String(value).split(';');
  const m = /^"([^"]+)"$/.exec(name.trim());
  assert.ok(m, `not a structured-field string item: ${String(value)}`);
  return { name: m[1], params: Object.fromEntries(params.map((p) => { const [k, v] = p.trim().split('='); return [k, Number(v)]; })) };
}

for (const dialect of await dialects()) {
  describe(`rate limits (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 3, seed: 1 }, env: { RATE_LIMIT_RPS: String(RPS), RATE_LIMIT_BURST: String(BURST) } });
    });
    after(() => t.close());

    const expectHeaders = (res: LightMyRequestResponse, remaining: number) => {
      const policy = parseItem(res.headers['ratelimit-policy']);
      assert.equal(policy.name, 'default');
      assert.equal(policy.params.q, BURST);
      assert.equal(policy.params.w, Math.ceil(BURST / RPS));
      const state = parseItem(res.headers.ratelimit);
      assert.equal(state.name, 'default');
      assert.equal(state.params.r, remaining);
      assert.ok(Number.isInteger(state.params.t) && state.params.t >= 0 && state.params.t <= Math.ceil(BURST / RPS));
    };

    it('every /api/v2 answer carries RateLimit-Policy and RateLimit; over the burst a 429 problem with Retry-After', async () => {
      const { token } = await t.credential(['products:read', 'brands:read']);
      for (let i = 1; i <= BURST; i++) {
        const res = await t.get(i % 2 ? '/api/v2/products' : '/api/v2/brands/1', token);
        assert.equal(res.statusCode, 200);
        expectHeaders(res, BURST - i);
      }
      const limited = await t.get('/api/v2/products', token);
      const problem = problemOf(limited, 429, 'rate_limited');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= Math.ceil(1 / RPS), `Retry-After: ${limited.headers['retry-after']}`);
      assert.match(problem.detail, /retry/i);
      expectHeaders(limited, 0);
      // Another credential has a bucket of its own.
      const other = await t.credential(['products:read']);
      assert.equal((await t.get('/api/v2/products', other.token)).statusCode, 200);
      // After Retry-After the bucket has refilled enough for one more request.
      await new Promise((r) => setTimeout(r, retryAfter * 1000 + 50));
      assert.equal((await t.get('/api/v2/products', token)).statusCode, 200);
    });

    it('a token refused for its scope or a bad request still answers as a problem, never a 5xx', async () => {
      const { token } = await t.credential(['products:read']);
      const bad = await t.get('/api/v2/products?limit=0', token);
      problemOf(bad, 400, 'invalid_parameter', 'limit');
      assert.ok(bad.headers.ratelimit, 'a request that reached the guard is counted and says so');
      problemOf(await t.get('/api/v2/orders', token), 403, 'insufficient_scope');
    });

    if (dialect === 'postgres') {
      it('two nodes on one PostgreSQL store share one bucket per credential', async () => {
        // A bucket that does not refill during the test, whatever the machine's speed.
        const slow = await createTestApp(dialect, { env: { RATE_LIMIT_RPS: '0.001', RATE_LIMIT_BURST: String(BURST) } });
        const store2: Store = slow.database.open();
        const node2: FastifyInstance = await buildApp(await createContext(slow.config, store2), { logger: false });
        try {
          const warm = await slow.credential(['products:read']);
          assert.equal((await node2.inject({ method: 'GET', url: '/api/v2/products', headers: { authorization: `Bearer ${warm.token}` } })).statusCode, 200);
          const { token } = await slow.credential(['products:read']);
          const statuses: number[] = [];
          for (let i = 0; i < BURST + 1; i++) {
            const app = i % 2 ? node2 : slow.app;
            const res = await app.inject({ method: 'GET', url: '/api/v2/products', headers: { authorization: `Bearer ${token}` } });
            statuses.push(res.statusCode);
            if (res.statusCode === 200) assert.equal(parseItem(res.headers.ratelimit).params.r, BURST - 1 - i);
          }
          assert.deepEqual(statuses, [...Array(BURST).fill(200), 429]);
          const elsewhere = await slow.app.inject({ method: 'GET', url: '/api/v2/products', headers: { authorization: `Bearer ${token}` } });
          problemOf(elsewhere, 429, 'rate_limited');
        } finally {
          await node2.close();
          await store2.close();
          await slow.close();
        }
      });
    }
  });
}
