import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import fc from 'fast-check';
import type { ExportColumn } from '../../../src/listing/formats/columns.ts';
import { XlsxExportWriter } from '../../../src/listing/formats/xlsx.ts';
import { nativeBuf, useNativeZipCrc, zipCrcPackage } from '../../../src/listing/formats/zip-crc.ts';

/** CRC-32 (IEEE, the zip format's) continued from `crc`, bit by bit: a reference that shares no code with either. */
function reference(data: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

/** Each entry of a zip file, from its central directory: name, the CRC-32 it declares, and its content inflated. */
function entries(zip: Buffer): Array<{ name: string; crc: number; content: Buffer }> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(eocd >= 0, 'an end of central directory record');
  let at = zip.readUInt32LE(eocd + 16);
  const found = [];
  for (let n = zip.readUInt16LE(eocd + 10); n > 0; n--) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory header');
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    found.push({ name, crc, content: method === 8 ? zlib.inflateRawSync(data) : Buffer.from(data) });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return found;
}

describe("the zip's CRC-32", () => {
  it('is computed by zlib, giving what crc-32 gives for every buffer and every CRC it is continued from', () => {
    const crc = zipCrcPackage();
    assert.ok(crc, "crc-32 is found along ExcelJS's packages");
    const hasNative = typeof (zlib as { crc32?: unknown }).crc32 === 'function';
    assert.equal(useNativeZipCrc(), hasNative);
    // In the copy crc32-stream loads (xlsx.ts, imported above, has already pointed it there).
    if (hasNative) assert.equal(crc.buf, nativeBuf);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (data, seed) => {
        assert.equal(crc.buf(data, seed) >>> 0, reference(data, seed >>> 0));
        assert.equal(crc.buf(data) >>> 0, reference(data));
      }),
      { numRuns: 500 },
    );
    // crc32-stream's first call passes its initial checksum, a buffer of four zero bytes, as the seed.
    assert.equal(crc.buf(Buffer.from('abc'), Buffer.alloc(4)) >>> 0, reference(Buffer.from('abc')));
  });

  it('that a workbook declares for each part is its content\'s', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const columns: ExportColumn[] = [
      { name: 'id', type: 'integer', slot: 0 },
      { name: 'name', type: 'string', slot: 1 },
    ];
    const writer = new XlsxExportWriter(out, 'crc', columns);
    await writer.write(Array.from({ length: 5_000 }, (_v, i) => [i, `name ${i} ${'žluť '.repeat(i % 7)}`]), new AbortController().signal);
    await writer.finish();
    const parts = entries(Buffer.concat(chunks));
    assert.ok(parts.some((p) => p.name === 'xl/worksheets/sheet1.xml' && p.content.length > 200_000), 'the sheet is among them');
    for (const part of parts) assert.equal(part.crc, reference(part.content), part.name);
  });
});
