import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

const FLOOD = fileURLToPath(new URL('./fixtures/bearer-flood.ts', import.meta.url));
const REQUESTS = 20_000;
/** The table of unknown well-formed tokens holds at most this many (NEGATIVE_MAX in src/auth/tokens.ts). */
const UNKNOWN_MAX = 10_000;

for (const dialect of await dialects()) {
  describe(`malformed bearer tokens cost nothing lasting (${dialect})`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      ({ token } = await t.credential(['products:read']));
    });
    after(() => t.close());

    const call = (bearer: string) => t.app.inject({ method: 'GET', url: '/api/v2/products?limit=1', headers: { authorization: `Bearer ${bearer}` } });

    it('refuses tokens that cannot be ours without remembering them', async () => {
      const start = t.ctx.tokens.cacheSize();
      const shapes = [
        randomBytes(6000).toString('base64url'),
        `sdt_${randomBytes(6000).toString('base64url')}`,
        `sdt_${randomBytes(32).toString('base64url')}x`,
        `sdt_${randomBytes(31).toString('base64url')}`,
        `sds_${randomBytes(32).toString('base64url')}`,
        token.toUpperCase(),
        `${token}=`,
      ];
      for (const bearer of shapes) problemOf(await call(bearer), 401, 'invalid_token');
      assert.deepEqual(t.ctx.tokens.cacheSize(), start, 'no entry for a token of the wrong shape');
    });

    it('remembers a well-formed unknown token by its hash, once, and still lets the real one through', async () => {
      const made = `sdt_${randomBytes(32).toString('base64url')}`;
      const start = t.ctx.tokens.cacheSize();
      for (let i = 0; i < 3; i++) problemOf(await call(made), 401, 'invalid_token');
      assert.equal(t.ctx.tokens.cacheSize().unknown, start.unknown + 1);
      assert.equal((await call(token)).statusCode, 200);
      assert.ok(t.ctx.tokens.cacheSize().live >= 1);
    });

    it(`after ${REQUESTS} requests with random long tokens the cache stays bounded and the heap returns`, async () => {
      const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', FLOOD, dialect, String(REQUESTS)], { maxBuffer: 1 << 20, timeout: 240_000 });
      const report = JSON.parse(stdout) as { before: number; after: number; cache: { live: number; unknown: number }; statuses: Record<string, number>; valid: number };
      const mb = (n: number) => Math.round(n / 1e5) / 10;
      console.log(`  ${dialect}: heap ${mb(report.before)} → ${mb(report.after)} MB after gc; cache ${JSON.stringify(report.cache)}`);
      assert.deepEqual(report.statuses, { 401: REQUESTS }, 'every made-up token is a 401');
      assert.equal(report.valid, 200, 'the real token still works');
      assert.ok(report.cache.unknown <= UNKNOWN_MAX, `unknown tokens remembered: ${report.cache.unknown}`);
      assert.ok(report.cache.live <= 2, `live tokens remembered: ${report.cache.live}`);
      // 10 000 tokens of 8 to 15 KB were sent (about 115 MB); keeping any of them would show. What may stay is
      // the bounded table of unknown hashes (about 2 MB) and allocator noise.
      assert.ok(report.after - report.before < 24e6, `heap grew by ${mb(report.after - report.before)} MB`);
    });
  });
}
