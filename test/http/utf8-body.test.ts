import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { utf8Body } from '../../src/http/utf8-body.ts';

const MIB = 1 << 20;

describe('utf8Body', () => {
  it("gives Buffer.from's bytes for texts of every size and kind, through the scratch buffer and around it", () => {
    const texts = [
      '',
      '{"name":"žluťoučký kůň"}',
      'a'.repeat(2047),
      'a'.repeat(2048),
      JSON.stringify({ data: Array.from({ length: 100 }, (_, i) => ({ id: i, name: `Produkt č. ${i} 🐎`, note: 'x'.repeat(400) })) }),
      // Lone surrogates become U+FFFD in both.
      `${'b'.repeat(5000)}\ud800${'c'.repeat(10)}\udc00`,
      // Fits by length, not by bytes (3 bytes per character): not cut short.
      'ř€'.repeat(MIB / 4),
      // Exactly the scratch buffer's bytes, and one character more than it holds.
      'd'.repeat(MIB),
      'e'.repeat(MIB + 1),
      // Ends just short of the limit with a 4-byte character that cannot fit.
      `${'f'.repeat(MIB - 2)}😀`,
    ];
    for (const text of texts) {
      const body = utf8Body(text);
      assert.ok(Buffer.isBuffer(body));
      assert.ok(body.equals(Buffer.from(text)), `${text.length} characters`);
      assert.equal(body.toString('utf8'), Buffer.from(text).toString('utf8'));
    }
  });

  it('an answer keeps its bytes when the next one is encoded (each is its own copy)', () => {
    const first = utf8Body('ü'.repeat(3000));
    const copy = Buffer.from(first);
    utf8Body('z'.repeat(9000));
    assert.ok(first.equals(copy));
    assert.equal(first.length, 6000);
  });
});
