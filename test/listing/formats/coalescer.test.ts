import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Coalescer } from '../../../src/listing/formats/bytes.ts';

describe('Coalescer (what a compressor is given at a time)', () => {
  it('gives back the bytes in order, once at least the size is held, and the rest on take', () => {
    const held = new Coalescer(10);
    const out: Buffer[] = [];
    const input = Buffer.from('abcdefghijklmnopqrstuvwxyz0123456789');
    for (const cut of [[0, 4], [4, 9], [9, 12], [12, 13], [13, 30], [30, 36]]) {
      const whole = held.add(input.subarray(cut[0], cut[1]));
      if (whole) {
        assert.ok(whole.length >= 10);
        out.push(whole);
      }
    }
    // 0-12 (12 bytes) and 12-30 (18 bytes) came out whole; 30-36 is held until take.
    assert.deepEqual(out.map((b) => b.length), [12, 18]);
    out.push(held.take()!);
    assert.equal(Buffer.concat(out).toString(), input.toString());
    assert.equal(held.take(), undefined);
  });

  it('a piece as large as the size is given back as it is, without a copy', () => {
    const held = new Coalescer(4);
    const piece = Buffer.from('abcdef');
    assert.equal(held.add(piece), piece);
    assert.equal(held.take(), undefined);
  });
});
