import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { answerBody } from '../../src/http/utf8-body.ts';

const MIB = 1 << 20;

describe('answerBody', () => {
  it('leaves a small answer a string', () => {
    for (const text of ['', '{"name":"žluťoučký kůň"}', 'a'.repeat(2047)]) assert.equal(answerBody(text), text);
  });

  it("gives a large answer as Buffer.from's bytes, through the scratch buffer and around it", () => {
    const texts = [
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
      const body = answerBody(text);
      assert.ok(Buffer.isBuffer(body), `${text.length} characters: bytes`);
      assert.ok(body.equals(Buffer.from(text)), `${text.length} characters`);
    }
  });

  it("an answer's buffer serves another answer once its response has finished, and not before", () => {
    const response = new EventEmitter();
    const first = answerBody('a'.repeat(40_000), response) as Buffer;
    const meanwhile = answerBody('b'.repeat(40_000), new EventEmitter()) as Buffer;
    assert.ok(meanwhile.buffer !== first.buffer, 'taken while the first is still being sent');
    assert.ok(first.equals(Buffer.from('a'.repeat(40_000))));
    response.emit('finish');
    // 50 000 bytes: the same size class as 40 000 (64 KiB).
    const next = answerBody('c'.repeat(50_000), new EventEmitter()) as Buffer;
    assert.ok(next.buffer === first.buffer, 'the same size class takes the finished one');
    assert.ok(next.equals(Buffer.from('c'.repeat(50_000))));
    // A response that never finishes leaves its buffer out of the pool.
    const unfinished = answerBody('d'.repeat(40_000), new EventEmitter()) as Buffer;
    assert.ok(unfinished.buffer !== meanwhile.buffer && unfinished.buffer !== first.buffer);
  });

  it('an answer keeps its bytes when the next one is encoded (each is its own copy)', () => {
    const first = answerBody('ü'.repeat(3000));
    assert.ok(Buffer.isBuffer(first));
    const copy = Buffer.from(first);
    answerBody('z'.repeat(9000));
    assert.ok(first.equals(copy));
    assert.equal(first.length, 6000);
  });
});
