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
 * The largest answer buffer (and the scratch buffer's bytes): a text longer than this (in UTF-16 units) cannot
 * fit, and one of this length may not (up to 3 bytes a unit); either is given to `Buffer.from`.
 */
const SCRATCH_BYTES = 1 << 20;
const SMALLEST_CLASS = 1 << 12;
/** Free buffers kept per size class: about this many bytes, and between 2 and 16 buffers (at most 7 MiB in all). */
const KEEP_BYTES = 1 << 20;

let scratch: Buffer | undefined;
/** Free answer buffers by size (powers of two from SMALLEST_CLASS to SCRATCH_BYTES). */
const free = new Map<number, Buffer[]>();

/** What `response` needs to give an answer's buffer back: its 'finish' (every byte handed to the socket). */
export interface Finishing {
  once(event: 'finish', listener: () => void): unknown;
}

/**
 * The answer `text` as it goes out: a string when small, else its UTF-8 bytes in a buffer of this module's that
 * comes back for another answer once `response` has finished (its last write done: the socket, or the
 * compressor before it, is through with the bytes). A response that never finishes (the client went away)
 * leaves its buffer to the garbage collector.
 *
 * Why recycled: each page's bytes in a new buffer were memory outside V8's heap, freed only by its next
 * collection, many at once; glibc then gave the freed memory back to the system, and took it again for the
 * next pages, page fault by page fault: 5.4 minor faults per answer under the benchmark's load (SQLite, first
 * page of 100 products; `perf` put 16 µs of page faults and 4 µs of `brk` in each), none in ceiling (b), whose
 * socket write frees its copy at once. Recycled, 0.05. The CPU per page, side by side against the commit before
 * (12 rounds, bench/results/side-by-side-2026-11-28T1242.md): 0.97-0.99 of it for filtered pages, 0.99-1.00 for
 * the first page; one product (a string) unchanged. Small, but also no churn of memory outside the heap.
 */
export function answerBody(text: string, response?: Finishing): string | Buffer {
  if (text.length < SMALL_TEXT) return text;
  if (text.length > SCRATCH_BYTES) return Buffer.from(text);
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  const bytes = scratch.write(text, 0, 'utf8');
  // A text that did not fit is cut at a character boundary, leaving at most 3 bytes unused: one that ends this
  // close to the end may not have fitted, and is encoded on its own.
  if (bytes > SCRATCH_BYTES - 4) return Buffer.from(text);
  // Copied out of the scratch buffer rather than encoded straight into an answer buffer: the bytes' count is only
  // known once encoded, and a text of two-byte characters tried in a buffer of its length's class would be
  // encoded twice whenever it did not fit (one pass over a two-byte string costs more than this copy).
  const buffer = take(classOf(bytes));
  scratch.copy(buffer, 0, 0, bytes);
  response?.once('finish', () => give(buffer));
  return buffer.subarray(0, bytes);
}

/** The smallest size class that holds `n` bytes. */
function classOf(n: number): number {
  return n <= SMALLEST_CLASS ? SMALLEST_CLASS : 2 ** Math.ceil(Math.log2(n));
}

function take(size: number): Buffer {
  // Memory of its own, never a slice of Node's shared pool: the whole buffer is this module's to lend.
  return free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
}

function give(buffer: Buffer): void {
  let list = free.get(buffer.length);
  if (!list) free.set(buffer.length, (list = []));
  if (list.length < Math.min(16, Math.max(2, KEEP_BYTES / buffer.length))) list.push(buffer);
}
