import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureAdminToken } from '../../src/auth/admin-token.ts';
import { hashingKey } from '../../src/auth/credentials.service.ts';
import { keyedHash } from '../../src/auth/secrets.ts';
import { ConfigError, loadConfig, MIN_ADMIN_TOKEN_LENGTH } from '../../src/config.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

describe('ADMIN_TOKEN at start', () => {
  it(`refuses one shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters, or with spaces, in one line that does not echo it`, () => {
    for (const token of ['admin', 'test-admin-token', 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH - 1), `${'x'.repeat(20)} ${'y'.repeat(20)}`]) {
      assert.throws(() => loadConfig({ ADMIN_TOKEN: token }, {}), (e: Error) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /^ADMIN_TOKEN must be at least 32 characters/);
        assert.ok(!e.message.includes('\n') && !e.message.includes(token), e.message);
        return true;
      });
    }
  });

  it('accepts a long one, and none (then one is generated)', () => {
    assert.equal(loadConfig({ ADMIN_TOKEN: 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH) }, {}).adminToken, 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH));
    assert.equal(loadConfig({}, {}).adminToken, undefined);
    assert.equal(loadConfig({ ADMIN_TOKEN: '' }, {}).adminToken, undefined);
  });
});

for (const dialect of await dialects()) {
  describe(`the generated admin token (${dialect})`, () => {
    it('nodes starting together on one database agree on one token, and only one of them has it to print', async () => {
      const database = await createTestDatabase(dialect);
      const nodes = [database.store, database.open(), database.open(), database.open()];
      try {
        const key = await hashingKey(database.store.db);
        for (let round = 0; round < 10; round++) {
          await database.store.db.deleteFrom('settings').where('key', '=', 'admin_token_hash').execute();
          const results = await Promise.all(nodes.map((node) => ensureAdminToken(node.db, key, undefined)));
          const printed = results.filter((r) => r.generated !== undefined);
          assert.equal(printed.length, 1, `round ${round}: exactly one node generated the token`);
          assert.deepEqual(new Set(results.map((r) => r.hash)), new Set([keyedHash(key, printed[0].generated!)]), `round ${round}: all agree on it`);
          const stored = await database.store.db.selectFrom('settings').select('value').where('key', '=', 'admin_token_hash').executeTakeFirstOrThrow();
          assert.equal(stored.value, results[0].hash);
        }
        // A later start reads it and prints nothing.
        assert.equal((await ensureAdminToken(nodes[1].db, key, undefined)).generated, undefined);
      } finally {
        for (const node of nodes.slice(1)) await node.close();
        await database.drop();
      }
    });
  });

  describe(`wrong admin tokens are throttled per source address (${dialect})`, () => {
    const BURST = 3;
    let t: TestApp;

    before(async () => {
      // Practically no refill during the test: the bucket of failures empties after BURST wrong tokens.
      t = await createTestApp(dialect, { env: { ADMIN_FAILURE_RATE_LIMIT_RPS: '0.01', ADMIN_FAILURE_RATE_LIMIT_BURST: String(BURST) } });
    });
    after(() => t.close());

    const list = (remoteAddress: string, authorization?: string) =>
      t.app.inject({ method: 'GET', url: '/admin/api/credentials', remoteAddress, headers: authorization === undefined ? {} : { authorization } });

    it(`answers 401 to the first ${BURST} wrong tokens, then 429 with Retry-After, even to the right token`, async () => {
      for (let i = 0; i < BURST; i++) problemOf(await list('192.0.2.10', `Bearer wrong-${i}`), 401, 'invalid_token');
      for (const authorization of ['Bearer wrong-again', `Bearer ${ADMIN_TOKEN}`]) {
        const res = await list('192.0.2.10', authorization);
        problemOf(res, 429, 'rate_limited');
        assert.ok(Number(res.headers['retry-after']) >= 1, String(res.headers['retry-after']));
      }
      assert.equal((await list('192.0.2.11', `Bearer ${ADMIN_TOKEN}`)).statusCode, 200, 'another address is not affected');
    });

    it('does not count requests without an Authorization header, nor right tokens', async () => {
      for (let i = 0; i < BURST * 3; i++) problemOf(await list('192.0.2.20'), 401, 'invalid_token');
      for (let i = 0; i < BURST * 3; i++) assert.equal((await list('192.0.2.20', `Bearer ${ADMIN_TOKEN}`)).statusCode, 200);
    });

    it('counts an IPv6 client by its /64, and an IPv4-mapped address as the IPv4 one', async () => {
      for (let i = 0; i < BURST; i++) problemOf(await list(`2001:db8:1:2::${i + 1}`, 'Bearer wrong'), 401, 'invalid_token');
      problemOf(await list('2001:db8:1:2:ffff::9', `Bearer ${ADMIN_TOKEN}`), 429, 'rate_limited');
      assert.equal((await list('2001:db8:1:3::1', `Bearer ${ADMIN_TOKEN}`)).statusCode, 200, 'the next /64 is another client');
      problemOf(await list('::ffff:192.0.2.10', `Bearer ${ADMIN_TOKEN}`), 429, 'rate_limited');
    });

    it('says so in the OpenAPI document: every admin operation can answer 429', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
      const admin = Object.entries(doc.paths).filter(([path]) => path.startsWith('/admin/api/'));
      assert.ok(admin.length > 10);
      for (const [path, operations] of admin) for (const [method, op] of Object.entries(operations)) assert.ok(op.responses['429'], `${method} ${path}`);
    });
  });
}
