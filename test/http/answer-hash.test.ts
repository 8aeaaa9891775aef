import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import xxhash from 'xxhash-wasm';
import { answerHash } from '../../src/http/answer-hash.ts';

describe('answerHash: the hash of an answer ETag', () => {
  it('is XXH64 with seed 0, as 16 hex digits (the reference vectors)', () => {
    assert.equal(answerHash(''), 'ef46db3751d8e999');
    assert.equal(answerHash('abc'), '44bc2cf5ad770999');
    assert.equal(answerHash(Buffer.from('abc')), '44bc2cf5ad770999');
  });

  it('hashes a text and its UTF-8 bytes alike, and keeps leading zeros', async () => {
    const text = 'Žluťoučký kůň úpěl ďábelské ódy 🐎';
    assert.equal(answerHash(text), answerHash(Buffer.from(text)));
    const { h64 } = await xxhash();
    // Some short text whose hash has a leading zero digit: its tag still has 16.
    const short = Array.from({ length: 5000 }, (_, i) => `x${i}`).find((s) => h64(s) < 1n << 60n)!;
    assert.equal(answerHash(short).length, 16);
    assert.equal(answerHash(short)[0], '0');
  });

  it('hashes bytes beyond a slice (1 MiB) and long texts as the whole input, one byte changed changing it', async () => {
    const { h64Raw } = await xxhash();
    for (const size of [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 12345]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 2654435761) >>> 24;
      const whole = h64Raw(bytes).toString(16).padStart(16, '0');
      assert.equal(answerHash(bytes), whole, `${size} bytes`);
      bytes[size - 1] ^= 1;
      assert.notEqual(answerHash(bytes), whole, `${size} bytes, the last one changed`);
    }
    const long = 'ž'.repeat(400_000) + 'a'.repeat(10);
    assert.equal(answerHash(long), h64Raw(Buffer.from(long)).toString(16).padStart(16, '0'));
  });
});
