import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EVENT_TYPES, eventMatcher, matchesPattern, MAX_WILDCARDS, patternProblem, unknownPatterns } from '../../../src/events/webhooks/patterns.ts';
import { isPrivateAddress, refusalOf } from '../../../src/events/webhooks/ssrf.ts';

/** The textbook dynamic-programming glob match: slow but plainly right, the reference for the fast one. */
function reference(pattern: string, text: string): boolean {
  // can[j]: pattern[0..i) matches text[0..j)
  let can = Array.from({ length: text.length + 1 }, (_, j) => j === 0);
  for (const c of pattern) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    if (c === '*') {
      next[0] = can[0];
      for (let j = 1; j <= text.length; j++) next[j] = can[j] || next[j - 1];
    } else for (let j = 1; j <= text.length; j++) next[j] = can[j - 1] && text[j - 1] === c;
    can = next;
  }
  return can[text.length];
}

// Pure computation, the same on every database: no dialect loop.
describe('webhook event patterns', () => {
  it('match exactly as the reference glob does, on many generated patterns and types', () => {
    // A small alphabet makes partial matches, and so the fall-back paths, common.
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '.', '_'), maxLength: 24 });
    const pattern = fc.string({ unit: fc.constantFrom('a', 'b', '.', '*', '*'), maxLength: 16 });
    fc.assert(fc.property(pattern, text, (p, t) => matchesPattern(p, t) === reference(p, t)), { numRuns: 5000 });
    for (const type of EVENT_TYPES) {
      for (const p of ['*', type, `${type}*`, `*${type}`, type.replace('.', '*'), `${type.split('.')[0]}.*`, `*.${type.split('.')[1]}`, `*${type.slice(1, -1)}*`, `${type}x`, `x${type}`]) {
        assert.equal(matchesPattern(p, type), reference(p, type), `${p} ~ ${type}`);
      }
    }
  });

  it('finish on patterns that made the old regex backtrack exponentially', () => {
    // No timing assertion: were the matching exponential again, these calls would not return within the test's timeout.
    const evil = `${'*'.repeat(30)}x`;
    assert.equal(matchesPattern(evil, 'a'.repeat(200)), false);
    assert.equal(matchesPattern(evil, `${'a'.repeat(200)}x`), true);
    assert.equal(matchesPattern(`${'a*'.repeat(50)}b`, 'a'.repeat(100)), false);
    assert.deepEqual(unknownPatterns([evil, `${'*'.repeat(99)}`]), [evil]);
    assert.equal(eventMatcher([evil, 'order.*'])('order.created'), true);
  });

  it('are refused at subscribe time when malformed, too long or too wild', () => {
    for (const ok of ['*', 'order.*', '*.deleted', 'product-parameter.updated', `${'*'.repeat(MAX_WILDCARDS)}d`]) assert.equal(patternProblem(ok), undefined, ok);
    for (const bad of ['', 'Order.created', '.order', 'order created', 'order.créé', 'a'.repeat(101), `${'*'.repeat(MAX_WILDCARDS + 1)}d`, `${'*'.repeat(30)}x`]) {
      assert.ok(patternProblem(bad), JSON.stringify(bad));
    }
  });
});

describe('the webhook SSRF guard', () => {
  it('refuses every special-purpose IPv4 and IPv6 range, in any spelling the URL parser accepts', () => {
    const refused = [
      '127.0.0.1', '127.255.255.254', '0.0.0.0', '10.0.0.1', '100.64.0.1', '169.254.169.254', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1',
      '192.168.0.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      '::', '::1', '::127.0.0.1', '::7f00:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:0:7f00:1', '0:0:0:0:0:ffff:7f00:1',
      '64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::a00:1', '2002:7f00:1::', '2002:808:808::1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001:2::1', '2001:db8::1', '3fff::1', '100::1', '5f00::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fec0::1', 'ff02::1', '[::1]',
      'not-an-address', '',
    ];
    for (const address of refused) assert.ok(isPrivateAddress(address), address);
    const urls = ['http://[::127.0.0.1]/', 'http://[::ffff:127.0.0.1]/', 'http://[64:ff9b:1::a00:1]/', 'http://[2002:7f00:1::]/', 'http://[fe80::1]/', 'http://0x7f.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[0:0::ffff:127.0.0.1]/'];
    for (const url of urls) assert.ok(isPrivateAddress(new URL(url).hostname), url);
    assert.match(String(refusalOf('::7f00:1')), /^::7f00:1 is in ::\/96 \(IPv4-compatible/);
    assert.match(String(refusalOf('169.254.169.254')), /169\.254\.0\.0\/16 \(link-local/);
  });

  it('lets public addresses through, IPv4-mapped ones included', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.1', '172.32.0.1', '192.0.3.1', '198.20.0.1', '223.255.255.255',
      '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '2001:4860:4860::8888', '2003::1', '[2606:4700::1]']) {
      assert.equal(refusalOf(address), undefined, address);
    }
  });
});
