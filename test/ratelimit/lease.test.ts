import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { leaseSize, PostgresBuckets, type Policy } from '../../src/ratelimit/bucket.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

if ((await dialects()).includes('postgres')) {
  describe('rate limit leases on PostgreSQL', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase('postgres');
    });
    after(() => db.drop());

    const row = (key: string) => db.store.db.selectFrom('rate_buckets').select(['tokens', 'ts']).where('key', '=', key).executeTakeFirstOrThrow();
    const stored = async (key: string) => Number((await row(key)).tokens);

    it('a lease is at most 1/20 s of the rate and 1/10 of the burst, and one token at the default policy', () => {
      assert.equal(leaseSize({ name: 'default', rps: 20, burst: 100 }), 1);
      assert.equal(leaseSize({ name: 'x', rps: 200, burst: 1000 }), 10);
      assert.equal(leaseSize({ name: 'x', rps: 1_000_000, burst: 50 }), 5);
      assert.equal(leaseSize({ name: 'x', rps: 1_000_000, burst: 1_000_000 }), 1000);
    });

    it('spends a lease locally, one database round trip per lease, and every node takes from the one bucket', async () => {
      // 10 tokens a lease; the bucket refills 200 tokens/s, so a few ms add a token or two at most.
      const policy: Policy = { name: 'lease', rps: 200, burst: 100 };
      const nodeA = new PostgresBuckets(db.store);
      const nodeB = new PostgresBuckets(db.store);
      const first = await nodeA.take('k', policy);
      assert.equal(first.allowed, true);
      const afterFirst = await stored('k');
      assert.ok(afterFirst >= 90 && afterFirst < 91, `the bucket gave one lease of 10 (holds ${afterFirst})`);
      for (let i = 0; i < 9; i++) assert.equal((await nodeA.take('k', policy)).allowed, true);
      assert.equal(await stored('k'), afterFirst, 'nine more requests spent the lease without touching the database');
      // A new lease takes 10 tokens from the bucket as refilled (200 tokens/s, by the database clock, up to the burst).
      const leased = async (node: PostgresBuckets, message: string) => {
        const before = await row('k');
        assert.equal((await node.take('k', policy)).allowed, true);
        const now = await row('k');
        const refilled = Math.min(policy.burst, Number(before.tokens) + ((Number(now.ts) - Number(before.ts)) / 1000) * policy.rps);
        assert.ok(Math.abs(Number(now.tokens) - (refilled - 10)) < 1e-6, `${message} (${before.tokens} → ${now.tokens}, refilled to ${refilled})`);
      };
      await leased(nodeA, 'the eleventh request took a new lease');
      await leased(nodeB, 'another node leases from the same bucket');
    });

    it('concurrent requests share one refill, and the bucket still limits them', async () => {
      const policy: Policy = { name: 'tight', rps: 0.001, burst: 3 };
      const node = new PostgresBuckets(db.store);
      const takes = await Promise.all(Array.from({ length: 8 }, () => node.take('t', policy)));
      assert.equal(takes.filter((t) => t.allowed).length, 3);
      const refused = takes.find((t) => !t.allowed)!;
      assert.equal(refused.remaining, 0);
      assert.ok(refused.retryAfterSeconds >= 1);
    });
  });
}
