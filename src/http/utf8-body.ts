/**
 * The form in which a serialized answer goes out: a large one as its UTF-8 bytes, made once; a small one as it
 * is. Left a string, a JSON page is encoded three times on its way out: for its ETag's hash, for Fastify's
 * Content-Length (`Buffer.byteLength` walks it) and by the socket write. A text of ASCII alone is cheap to
 * encode (V8 keeps it one byte per character: 6-10 µs for a 55 kB page), but one name with a diacritic makes
 * the whole page a two-byte string, and on Node 20 each pass over it then costs 35-50 µs: together 100-150 µs
 * of the page's CPU. As bytes, the hash, the length and the write take them as they are. Measured side by side
 * on a store whose names carry Czech letters, a page of 100 products took 9 % (SQLite) and 17 % (PostgreSQL)
 * less CPU; on the benchmark's ASCII store the same (bench/results/utf8-body-2026-11-27.md).
 *
 * A small answer (one product is about 500 characters) stays a string: its passes cost little, and Node writes a
 * string body together with the headers, where bytes are a chunk of their own: made bytes, one product measured
 * 5 % more CPU per answer side by side (the same file).
 *
 * `Buffer.from` would make the bytes in two passes (it measures before it allocates): 84-101 µs against 39-55 µs
 * for one write into a buffer kept for the purpose and a copy out of it.
 */

/** Answers shorter than this (in UTF-16 units) go out as strings. */
const SMALL_TEXT = 2048;
/**
 * The scratch buffer's bytes, and so the longest text (in UTF-16 units) that tries it: a text longer than this
 * cannot fit, and one of this length may not (up to 3 bytes a unit); either is given to `Buffer.from`.
 */
const SCRATCH_BYTES = 1 << 20;

let scratch: Buffer | undefined;

export function answerBody(text: string): string | Buffer {
  if (text.length < SMALL_TEXT) return text;
  if (text.length > SCRATCH_BYTES) return Buffer.from(text);
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  const bytes = scratch.write(text, 0, 'utf8');
  // A text that did not fit is cut at a character boundary, leaving at most 3 bytes unused: one that ends this
  // close to the end may not have fitted, and is encoded on its own.
  if (bytes > SCRATCH_BYTES - 4) return Buffer.from(text);
  const body = Buffer.allocUnsafe(bytes);
  scratch.copy(body, 0, 0, bytes);
  return body;
}
