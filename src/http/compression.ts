import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The content codings we send, in our order of preference when a client likes several equally. */
export type Coding = 'br' | 'gzip';

/**
 * Answers smaller than this go as they are: below about a kilobyte the coding's header and the CPU cost more
 * than the bytes saved (a single brand, a problem, an empty page).
 */
export const COMPRESSION_THRESHOLD = 1024;

/**
 * Levels chosen by measurement (bench/compression.ts, bench/results/compression-2026-11-23.md): on a
 * 1000-product page (~1.1 MB JSON) gzip 6 and brotli 4 take about the same CPU, brotli's bytes are smaller;
 * brotli's default quality 11 costs over 20 times more CPU for a few per cent fewer bytes, far too slow
 * for live answers. gzip above 6 buys almost nothing here.
 */
export const GZIP_LEVEL = 6;
export const BROTLI_QUALITY = 4;

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
  const names = (Array.isArray(current) ? current.join(',') : typeof current === 'string' ? current : '')
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
  reply.header('vary', merged.map((n) => (n.toLowerCase() === 'accept-encoding' ? 'Accept-Encoding' : n)).join(', '));
}

/**
 * gzip and br of the answers of the routes registered after this on `app` (the /api/v2 scope), through
 * @fastify/compress: JSON, CSV and NDJSON above COMPRESSION_THRESHOLD, streamed exports through a streaming
 * compressor (backpressure, the idle cut-off and abort handling stay: the export still watches the response).
 * Never HEAD (nothing to compress), 204 or 304 (no body). Request bodies are not decompressed.
 */
export async function addCompression(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request) => {
    const coding = request.method === 'HEAD' ? undefined : negotiateCoding(request.headers['accept-encoding']);
    request.coding = coding;
    // The plugin negotiates again from this header: it sees only our choice, so both decide alike.
    request.headers['accept-encoding'] = coding ?? 'identity';
  });
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD,
    customTypes: isCompressible,
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
      async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        if (isCompressible(reply.getHeader('content-type'))) varyWithEncoding(reply);
        return payload;
      },
    ];
  });
}
