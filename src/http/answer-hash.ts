import xxhash from 'xxhash-wasm';

/*
 * The hash of a JSON answer's ETag (conditional.ts): XXH64 of its UTF-8 bytes, 16 hex digits. Every 200 JSON
 * answer is hashed, so the hash is on every request's path: SHA-1 (OpenSSL) of a 55 kB page of 100 products took
 * 27-28 µs on the benchmark machine, 6-7 % of the API's CPU for the page, XXH64 3.5-3.9 µs (xxhash-wasm; a
 * native binding measured 2.7 µs, not worth a native addon). A tag only has to change when the answer does;
 * nothing is gained by making two answers of one URL collide (a client sees its own data), so a hash that resists
 * a forger is not needed, and 64 bits leave a changed answer one chance in 2^64 of keeping its tag.
 *
 * xxhash-wasm copies its input into the module's memory, which grows to the largest input and never shrinks:
 * bytes are hashed in slices of at most SLICE_BYTES, and a string is hashed whole only when small (encoded, it
 * takes up to three bytes a character), so that memory stays about a mebibyte whatever the answer.
 */
const { h64, h64Raw, create64 } = await xxhash();

const SLICE_BYTES = 1 << 20;
const SMALL_STRING = SLICE_BYTES / 3;

export function answerHash(body: string | Buffer): string {
  let value: bigint;
  if (typeof body === 'string') value = body.length <= SMALL_STRING ? h64(body) : hashBytes(Buffer.from(body));
  else value = hashBytes(body);
  return value.toString(16).padStart(16, '0');
}

function hashBytes(bytes: Uint8Array): bigint {
  if (bytes.byteLength <= SLICE_BYTES) return h64Raw(bytes);
  const state = create64();
  for (let at = 0; at < bytes.byteLength; at += SLICE_BYTES) state.update(bytes.subarray(at, at + SLICE_BYTES));
  return state.digest();
}
