import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createCredential } from '../../src/auth/credentials.service.ts';
import { createContext } from '../../src/context.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const CAP = 5;
const BURST = 3;

/** An RFC 6749 error body with 429, Retry-After and no-store: what a client over a token endpoint limit gets. */
function assertSlowDown(res: LightMyRequestResponse, whose: RegExp): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'error_description']);
  assert.equal(res.json().error, 'slow_down');
  assert.match(res.json().error_description, whose);
  assert.ok(Number(res.headers['retry-after']) >= 1, String(res.headers['retry-after']));
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.match(String(res.headers.ratelimit), /^"token(-address)?";r=0;t=\d+$/);
}

for (const dialect of await dialects()) {
  describe(`live tokens per credential are capped (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect, { env: { MAX_LIVE_TOKENS_PER_CREDENTIAL: String(CAP) } });
    });
    after(() => t.close());

    const issue = async (c: { clientId: string; clientSecret: string }) => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access_token as string;
    };
    const rows = async (id: number) =>
      Number((await t.database.store.db.selectFrom('tokens').select((eb) => eb.fn.countAll().as('n')).where('credential_id', '=', id).executeTakeFirstOrThrow()).n);

    it(`keeps the ${CAP} newest tokens; the oldest stop working at once on this node`, async () => {
      const c = await createCredential(t.database.store.db, t.ctx.hashKey, 'busy worker', ['brands:read']);
      const other = await createCredential(t.database.store.db, t.ctx.hashKey, 'neighbour', ['brands:read']);
      const neighbour = await issue(other);
      const tokens: string[] = [];
      for (let i = 0; i < CAP + 3; i++) {
        tokens.push(await issue(c));
        // Every token is used once, so that this node has cached it as valid before it is evicted.
        assert.equal((await t.get('/api/v2/brands?limit=1', tokens[i])).statusCode, 200);
        // Creation times are kept to the millisecond; a step between issues makes "oldest" unambiguous.
        await sleep(3);
      }
      assert.equal(await rows(c.id), CAP);
      for (const [i, token] of tokens.entries()) {
        const status = (await t.get('/api/v2/brands?limit=1', token)).statusCode;
        assert.equal(status, i < 3 ? 401 : 200, `token ${i + 1} of ${tokens.length}`);
      }
      assert.equal((await t.get('/api/v2/brands?limit=1', neighbour)).statusCode, 200, 'another credential keeps its token');
      assert.equal(await rows(other.id), 1);
    });
  });
}

for (const dialect of await dialects()) {
  describe(`POST /oauth/token is rate-limited per client and per source address (${dialect})`, () => {
    let perClient: TestApp;
    let perAddress: TestApp;

    before(async () => {
      // Practically no refill during the test: a bucket is empty after BURST requests.
      perClient = await createTestApp(dialect, { env: { TOKEN_RATE_LIMIT_RPS: '0.01', TOKEN_RATE_LIMIT_BURST: String(BURST) } });
      perAddress = await createTestApp(dialect, { env: { TOKEN_ADDRESS_RATE_LIMIT_RPS: '0.01', TOKEN_ADDRESS_RATE_LIMIT_BURST: String(BURST) } });
    });
    after(async () => {
      await perClient.close();
      await perAddress.close();
    });

    const post = (app: FastifyInstance, c: { clientId: string; clientSecret: string }, remoteAddress = '192.0.2.1') =>
      app.inject({ method: 'POST', url: '/oauth/token', remoteAddress, payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret } });

    it(`issues ${BURST} tokens to one client, then answers 429 slow_down with Retry-After; other clients go on`, async () => {
      const t = perClient;
      const c = await createCredential(t.database.store.db, t.ctx.hashKey, 'eager', ['brands:read']);
      const calm = await createCredential(t.database.store.db, t.ctx.hashKey, 'calm', ['brands:read']);
      for (let i = 0; i < BURST; i++) assert.equal((await post(t.app, c, `192.0.2.${i + 1}`)).statusCode, 200, 'from any address');
      assertSlowDown(await post(t.app, c, '192.0.2.99'), /for this client/);
      assert.equal((await post(t.app, calm)).statusCode, 200);
      // A wrong secret is not this client's request: it is refused as such and costs the client nothing.
      assert.equal((await post(t.app, { clientId: calm.clientId, clientSecret: 'wrong' })).json().error, 'invalid_client');
      assert.equal((await post(t.app, calm)).statusCode, 200);
    });

    it(`answers 429 to a source address after ${BURST} requests of any kind, before reading them`, async () => {
      const t = perAddress;
      const c = await createCredential(t.database.store.db, t.ctx.hashKey, 'behind one address', ['brands:read']);
      assert.equal((await post(t.app, c, '198.51.100.7')).statusCode, 200);
      assert.equal((await post(t.app, { clientId: 'sda_nobody', clientSecret: 'x' }, '198.51.100.7')).statusCode, 401);
      assert.equal((await t.app.inject({ method: 'POST', url: '/oauth/token', remoteAddress: '198.51.100.7', payload: 'garbage', headers: { 'content-type': 'text/plain' } })).statusCode, 400);
      assertSlowDown(await post(t.app, c, '198.51.100.7'), /from this address/);
      assertSlowDown(await post(t.app, c, '::ffff:198.51.100.7'), /from this address/);
      assert.equal((await post(t.app, c, '198.51.100.8')).statusCode, 200, 'the neighbour address is another bucket');
      // IPv6 counts by /64: one subscriber's many addresses are one client.
      for (let i = 0; i < BURST; i++) assert.equal((await post(t.app, c, `2001:db8:5:6::${i + 1}`)).statusCode, 200);
      assertSlowDown(await post(t.app, c, '2001:db8:5:6:abcd::1'), /from this address/);
      assert.equal((await post(t.app, c, '2001:db8:5:7::1')).statusCode, 200);
    });

    if (dialect === 'postgres') {
      it('shares the buckets between the nodes of one store', async () => {
        const t = perClient;
        const store2 = t.database.open();
        const node2 = await buildApp(await createContext(t.config, store2), { logger: false });
        try {
          await node2.ready();
          const c = await createCredential(t.database.store.db, t.ctx.hashKey, 'two nodes', ['brands:read']);
          for (let i = 0; i < BURST; i++) assert.equal((await post(i % 2 ? node2 : t.app, c)).statusCode, 200);
          assertSlowDown(await post(t.app, c), /for this client/);
          assertSlowDown(await post(node2, c), /for this client/);
        } finally {
          await node2.close();
          await store2.close();
        }
      });
    }

    it('documents the 429 in the OpenAPI document', async () => {
      const doc = (await perClient.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json();
      const responses = doc.paths['/oauth/token'].post.responses;
      assert.ok(responses['429'], JSON.stringify(Object.keys(responses)));
    });
  });
}
