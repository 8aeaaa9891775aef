import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addressKey } from '../../src/ratelimit/address.ts';
import { MemoryBuckets, PostgresBuckets } from '../../src/ratelimit/bucket.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const policy = { name: 'p', rps: 0.01, burst: 2 };

describe('per-address keys', () => {
  it('keep IPv4 as it is, read IPv4-mapped IPv6 as IPv4, and count other IPv6 by /64', () => {
    assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('::ffff:c000:201'), '192.0.2.1');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('2001:0db8:0000:0000:ffff:ffff:ffff:ffff'), '2001:db8:0:0::/64');
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
    assert.equal(addressKey('not an address'), 'not an address');
  });
});

describe('buckets of one process', () => {
  it('hold at most maxKeys keys, dropping the least recently used', () => {
    const buckets = new MemoryBuckets(100);
    for (let i = 0; i < 1000; i++) buckets.takeNow(`addr:${i}`, policy);
    assert.equal(buckets.size, 100);
    // The most recent keys are still counted: a second take empties their bucket, a third is refused.
    buckets.takeNow('addr:999', policy);
    assert.equal(buckets.takeNow('addr:999', policy).allowed, false);
    // An evicted key starts again with a full bucket.
    assert.equal(buckets.peek('addr:0', policy).allowed, true);
  });

  it('peek tells whether a take would pass without taking or remembering', () => {
    const buckets = new MemoryBuckets(10);
    assert.equal(buckets.peek('k', policy).allowed, true);
    assert.equal(buckets.size, 0);
    buckets.takeNow('k', policy);
    buckets.takeNow('k', policy);
    const blocked = buckets.peek('k', policy);
    assert.equal(blocked.allowed, false);
    assert.ok(blocked.retryAfterSeconds >= 1);
  });
});

for (const dialect of (await dialects()).filter((d) => d === 'postgres')) {
  describe(`shared buckets (${dialect})`, () => {
    let database: TestDatabase;

    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(() => database.drop());

    it('delete the rows of buckets idle for a day (keys from clients must not pile up)', async () => {
      const buckets = new PostgresBuckets(database.store);
      await buckets.take('fresh', policy);
      await database.store.db.insertInto('rate_buckets').values({ key: 'idle', tokens: 0, ts: Date.now() - 86_400_000 - 60_000, allowed: 0 }).execute();
      assert.equal(await buckets.pruneIdle(), 1);
      const keys = (await database.store.db.selectFrom('rate_buckets').select('key').execute()).map((r) => r.key);
      assert.deepEqual(keys, ['fresh']);
    });
  });
}
