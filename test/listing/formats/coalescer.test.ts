import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Coalescer } from '../../../src/listing/formats/bytes.ts';

describe('Coalescer (what a compressor is given at a time)', () => {
  it('gives back the bytes in order, once at least the size is held, and the rest on take', () => {
    const held = new Coalescer(10);
    const out: Buffer[] = [];
    const input = Buffer.from('abcdefghijklmnopqrstuvwxyz01234567');
    for (const cut of [[0, 4], [4, 9], [9, 12], [12, 13], [13, 30], [30, 34]]) {
      const whole = held.add(input.subarray(cut[0], cut[1]));
      if (whole) {
        assert.ok(whole.length >= 10);
        out.push(whole);
      }
    }
    // 0-12 (12 bytes) and 12-30 (18 bytes) came out whole; 30-34 (less than half the size) is held until take.
    assert.deepEqual(out.map((b) => b.length), [12, 18]);
    out.push(held.take()!);
    assert.equal(Buffer.concat(out).toString(), input.toString());
    assert.equal(held.take(), undefined);
  });

  it('a piece as large as the size, with nothing held, is given back as it is, without a copy', () => {
    const held = new Coalescer(4);
    const piece = Buffer.from('abcdef');
    assert.equal(held.add(piece), piece);
    assert.equal(held.take(), undefined);
    // Behind a held byte, it is joined to it.
    assert.equal(held.add(Buffer.from('i')), undefined);
    assert.equal(held.add(Buffer.from('jklm'))?.toString(), 'ijklm');
    assert.equal(held.take(), undefined);
  });

  it('joins the pieces of one buffer that follow each other into one view of it, without a copy', () => {
    const held = new Coalescer(10);
    const memory = Buffer.allocUnsafeSlow(32).fill(0);
    memory.write('0123456789abcdefghijklmnopqrstuv');
    assert.equal(held.add(memory.subarray(0, 3)), undefined);
    assert.equal(held.add(memory.subarray(3, 6)), undefined);
    // Another buffer's piece after at least half the size: what is held goes on as it is (a view, not a copy).
    const other = Buffer.from('XY');
    const first = held.add(other)!;
    assert.equal(first.toString(), '012345');
    assert.equal(first.buffer, memory.buffer, 'a view of the same memory');
    // Behind less than half, a piece of another buffer is joined to it (a copy).
    const joined = held.add(memory.subarray(6, 14))!;
    assert.equal(joined.toString(), 'XY6789abcd');
    assert.notEqual(joined.buffer, memory.buffer);
    held.add(memory.subarray(14, 16));
    held.add(memory.subarray(16, 18));
    const rest = held.take()!;
    assert.equal(rest.toString(), 'efgh');
    assert.equal(rest.buffer, memory.buffer);
    assert.equal(rest.byteOffset, 14);
  });
});
