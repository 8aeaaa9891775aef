import { createRequire } from 'node:module';
import zlib from 'node:zlib';

/**
 * The `crc-32` package's API as crc32-stream calls it: a buffer's CRC-32 continued from `seed`, as a signed 32-bit
 * number (its first call passes a buffer of four zero bytes, which crc-32 reads as 0).
 */
export interface Crc32 {
  buf(data: Uint8Array, seed?: number | Uint8Array): number;
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** crc-32's `buf` by zlib: crc-32 takes the CRC so far as a signed number (its result), zlib as an unsigned one; anything else is 0. */
export const nativeBuf: Crc32['buf'] = (data, seed) => native!(data, typeof seed === 'number' ? seed >>> 0 : 0) | 0;

/** The packages from ExcelJS down to the one that computes its zip entries' CRC-32, each required by the one before. */
const CHAIN = ['exceljs', 'archiver', 'zip-stream', 'compress-commons', 'crc32-stream'];

/**
 * ExcelJS's zip (archiver, zip-stream, compress-commons, crc32-stream) computes each entry's CRC-32 with the
 * `crc-32` package, in JavaScript: about 75 ms of the main thread per XLSX export of 100 000 products (95 MB of
 * sheet XML), where Node's own `zlib.crc32` (20.15 and later) takes a few. The main thread is what an XLSX export
 * waits for (the deflate runs beside it): 100 000 products in one process, alternating, medians of four exports,
 * took about 1.32 s against 1.44 s on SQLite and 0.95 s against 1.03 s on PostgreSQL.
 * This points that package's `buf` at zlib's, in the copy crc32-stream loads (found along CHAIN, so wherever npm
 * put it); the numbers are the same (test/listing/formats/zip-crc.test.ts). Where Node has no `zlib.crc32`, or a
 * package along the way is not found, nothing changes. Returns whether it did.
 */
export function useNativeZipCrc(): boolean {
  const crc = zipCrcPackage();
  if (!native || !crc) return false;
  crc.buf = nativeBuf;
  return true;
}

/** The `crc-32` that ExcelJS's zip computes its CRC-32 with, or undefined where it is not found. */
export function zipCrcPackage(): Crc32 | undefined {
  try {
    const require = CHAIN.reduce((from, name) => createRequire(from.resolve(name)), createRequire(import.meta.url));
    return require('crc-32') as Crc32;
  } catch {
    return undefined;
  }
}
