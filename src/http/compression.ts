import zlib, { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import { givingBack } from '../buffer-recycler.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The content codings we send, in our order of preference when a client likes several equally. */
export type Coding = 'br' | 'gzip';

/**
 * Answers smaller than this go as they are: below about a kilobyte the coding's header and the CPU cost more
 * than the bytes saved (a single brand, a problem, an empty page).
 */
export const COMPRESSION_THRESHOLD = 1024;

/**
 * Levels chosen by measurement (bench/compression.ts; docs/benchmarks.md): zlib alone on the bodies, CPU per
 * answer on a loaded 2-core VM, figures of one run (they vary by about 30 % between runs; the ranking does not).
 * A 1000-product JSON page, 570 KB:
 *   gzip 1 102 KB 3.0 ms · gzip 4 92 KB 4.6 ms · gzip 6 82 KB 7.4 ms · gzip 9 81 KB 11.3 ms
 *   br 1 89 KB 2.6 ms · br 4 81 KB 4.8 ms · br 5 73 KB 10.0 ms · br 6 71 KB 11.8 ms · br 11 59 KB 913 ms
 * The CSV export of the same products (392 KB) ranks alike (gzip 6 72 KB 5.5 ms, br 4 72 KB 3.9 ms).
 * br 4 gives gzip 6's bytes for two thirds of its CPU, so it is also preferred when a client takes both;
 * br 5 doubles the CPU for 9 % fewer bytes, and brotli's default 11 costs 190 times more, far too slow for
 * live answers. gzip 6 (zlib's default) saves 10 % of bytes over gzip 4 for 2.8 ms more per large page;
 * gzip 9 saves another 2 % for 4 ms more.
 */
export const GZIP_LEVEL = 6;
export const BROTLI_QUALITY = 4;

/**
 * Answers up to this size are compressed in one synchronous call (at most ~0.7 ms of the event loop at these
 * levels); larger ones, and every export, go through a streaming compressor on zlib's thread pool. The
 * plugin's own default on 2 cores is 8 KiB, which sends a 50-product page (~28 KB) down the stream path:
 * measured ~1.5 ms more CPU per answer than the 0.3 ms the compression itself takes.
 */
const SYNC_LIMIT = 64 * 1024;

/**
 * The output buffer of a streaming compressor (zlib's default is 16 kB), here and for snapshots' gzip. Each
 * buffer it fills needs a callback on the main thread before it goes on; for an export, which gives it 256 kB
 * at a time (COMPRESSED_PIECE_BYTES in listing/formats/export.ts), 16 kB meant several of them per piece, each
 * waiting while the main thread encoded rows. One buffer per compressed answer: 48 kB more for each large
 * answer in flight.
 */
export const COMPRESSOR_OUTPUT_BYTES = 1 << 16;

/**
 * zlib for the plugin: its own synchronous functions, its streaming compressors with COMPRESSOR_OUTPUT_BYTES,
 * which give a compressed export's buffers back once they have read them (buffer-recycler.ts).
 */
const compressors = {
  gzipSync: zlib.gzipSync,
  brotliCompressSync: zlib.brotliCompressSync,
  createGzip: (options: zlib.ZlibOptions) => givingBack(zlib.createGzip({ ...options, chunkSize: COMPRESSOR_OUTPUT_BYTES })),
  createBrotliCompress: (options: zlib.BrotliOptions) => givingBack(zlib.createBrotliCompress({ ...options, chunkSize: COMPRESSOR_OUTPUT_BYTES })),
};

/** What is worth compressing: JSON (pages, items, the changes feed, large problems), CSV and NDJSON. XLSX is already a zip. */
const COMPRESSIBLE = /^(?:application\/(?:json|problem\+json|x-ndjson)|text\/csv)\s*(?:;|$)/i;

export function isCompressible(contentType: unknown): boolean {
  return typeof contentType === 'string' && COMPRESSIBLE.test(contentType);
}

/**
 * The coding an Accept-Encoding header asks for (RFC 9110 §12.5.3): the highest q among br and gzip (x-gzip
 * and `*` count), ours preferred on a tie; identity (undefined) when none is acceptable, when the header is
 * absent or empty, or when the client ranks identity itself higher.
 */
export function negotiateCoding(header: string | undefined): Coding | undefined {
  if (!header) return undefined;
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^q\s*=\s*(.*)$/.exec(p);
      // A malformed weight (RFC 9110 §12.4.2: 0 to 1, three decimals at most) makes the member void.
      if (m) weight = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(m[1]) ? Number(m[1]) : 0;
    }
    const key = name === 'x-gzip' ? 'gzip' : name;
    // The same coding named twice: the more favourable weight counts.
    q.set(key, Math.max(q.get(key) ?? 0, weight));
  }
  const weightOf = (coding: string) => q.get(coding) ?? q.get('*') ?? 0;
  let best: Coding | undefined;
  for (const coding of ['br', 'gzip'] as const) if (weightOf(coding) > 0 && (!best || weightOf(coding) > weightOf(best))) best = coding;
  // Identity is acceptable unless excluded; it wins only when the client ranks it above every coding.
  if (best && q.has('identity') && q.get('identity')! > weightOf(best)) return undefined;
  return best;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The coding this answer is sent in when it is compressible and large enough (set on every request under compression). */
    coding?: Coding;
  }
}

/**
 * The coding an answer of this type and size will be sent in: the one decision, which the compressor follows
 * (it sees the negotiated header) and the ETag of a 304 names (conditional.ts), so that a validator always
 * says which representation it belongs to.
 */
export function codingOf(request: FastifyRequest, contentType: unknown, bytes: number): Coding | undefined {
  return request.coding && isCompressible(contentType) && bytes >= COMPRESSION_THRESHOLD ? request.coding : undefined;
}

/** Adds `Accept-Encoding` to a Vary header, keeping what is there (`Accept` of negotiated listings) without repeats. */
export function varyWithEncoding(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const key = Array.isArray(current) ? current.join(',') : typeof current === 'string' ? current : '';
  // The same few values every time (routes set them, not clients): merged once each.
  let merged = mergedVary.get(key);
  if (merged === undefined) {
    merged = withEncoding(key);
    if (mergedVary.size < 64) mergedVary.set(key, merged);
  }
  reply.header('vary', merged);
}

const mergedVary = new Map<string, string>();

function withEncoding(current: string): string {
  const names = current
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const seen = new Set<string>();
  const merged = [...names, 'Accept-Encoding'].filter((n) => {
    const key = n.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  // `Accept-Encoding` as the RFC spells it (the plugin writes it in lower case).
  return merged.map((n) => (n.toLowerCase() === 'accept-encoding' ? 'Accept-Encoding' : n)).join(', ');
}

/**
 * gzip and br of the answers of the routes registered after this on `app` (the /api/v2 scope), through
 * @fastify/compress: JSON, CSV and NDJSON above COMPRESSION_THRESHOLD, streamed exports through a streaming
 * compressor (backpressure, the idle cut-off and abort handling stay: the export still watches the response).
 * Never HEAD (nothing to compress), 204 or 304 (no body). Request bodies are not decompressed.
 */
export async function addCompression(app: FastifyInstance): Promise<void> {
  // Callback hooks (here and below), not async ones: they run on every request, and an async hook costs a
  // promise and a microtask turn each time.
  app.addHook('onRequest', (request, _reply, done) => {
    const coding = request.method === 'HEAD' ? undefined : negotiateCoding(request.headers['accept-encoding']);
    request.coding = coding;
    // The plugin negotiates again from this header: it sees only our choice, so both decide alike.
    request.headers['accept-encoding'] = coding ?? 'identity';
    done();
  });
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD,
    syncThreshold: SYNC_LIMIT,
    customTypes: isCompressible,
    zlib: compressors,
    zlibOptions: { level: GZIP_LEVEL },
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } },
  });
  // After the plugin's own onSend on every route (onRoute hooks run in order of registration): every
  // compressible answer says that it depends on Accept-Encoding, compressed or not (too small, identity
  // asked, a 304), so that a cache never gives a gzip body to a client that did not ask for one.
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [
      ...hooks,
      (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
        if (isCompressible(reply.getHeader('content-type'))) varyWithEncoding(reply);
        done(null, payload);
      },
    ];
  });
}
