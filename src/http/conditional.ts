import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { codingOf, type Coding } from './compression.ts';
import { answerHash } from './answer-hash.ts';
import { answerBody } from './utf8-body.ts';

/** Characters of the hash in an ETag: the 16 hex digits of answer-hash.ts's 64 bits. */
const HASH_CHARS = 16;
const SUFFIX: Record<Coding, string> = { gzip: '-gz', br: '-br' };

/**
 * A strong ETag of a serialized JSON answer (RFC 9110 §8.8.3): a hash of the exact bytes sent, so it is
 * right whatever shaped them (fields, include, filters, cursor), the same on every node (no clock, no
 * counter, no node id), and cheap (answer-hash.ts: a few µs for a page of 100 products, beside its query and
 * serialization). A compressed answer is another representation with other bytes, so its tag carries the
 * coding (`-gz`, `-br`); If-None-Match compares without it, since the data is the same.
 */
export function entityTag(body: string | Buffer, coding?: Coding): string {
  return `"${answerHash(body)}${coding ? SUFFIX[coding] : ''}"`;
}

/** The tag's data part: quotes, `W/` and our coding suffix gone (the weak comparison of RFC 9110 §8.8.3.2, across codings). */
function opaque(tag: string): string {
  const inner = tag.replace(/^W\//, '').replace(/^"|"$/g, '');
  return inner.length === HASH_CHARS + 3 && /-(?:gz|br)$/.test(inner) ? inner.slice(0, HASH_CHARS) : inner;
}

/**
 * Whether If-None-Match names the current representation: `*`, or a list of entity tags compared weakly
 * (RFC 9110 §13.1.2). Tags are scanned as the grammar has them (a quoted tag may hold a comma); a
 * malformed list matches nothing, which only costs a full answer.
 */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const current = opaque(etag);
  const list = /\s*(W\/)?("[^"]*")\s*(?:,|$)/y;
  let m: RegExpExecArray | null;
  while (list.lastIndex < header.length && (m = list.exec(header))) if (opaque(m[2]) === current) return true;
  return false;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const HTTP_DATES = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i,
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit years: RFC 9110 §5.6.7 reads them as within 50 years)
  /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i,
];
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/** Seconds since the epoch of an HTTP-date (RFC 9110 §5.6.7, all three forms), or undefined when it is not one. */
export function parseHttpDate(value: string): number | undefined {
  let day: string, month: string, year: string, h: string, mi: string, s: string;
  let m = HTTP_DATES[0].exec(value) ?? HTTP_DATES[1].exec(value);
  if (m) [, day, month, year, h, mi, s] = m;
  else if ((m = ASCTIME.exec(value))) [, month, day, h, mi, s, year] = m;
  else return undefined;
  let y = Number(year);
  if (year.length === 2) y += y + 2000 > new Date().getUTCFullYear() + 50 ? 1900 : 2000;
  const mon = MONTHS.indexOf(month.toLowerCase());
  const ms = Date.UTC(y, mon, Number(day), Number(h), Number(mi), Number(s));
  if (mon < 0 || Number.isNaN(ms) || new Date(ms).getUTCDate() !== Number(day)) return undefined;
  return ms / 1000;
}

/**
 * RFC 9110 §13.2.2 for GET and HEAD: If-None-Match decides when present; otherwise If-Modified-Since,
 * against Last-Modified (both of second precision; a date that is no HTTP-date is ignored, and so is the
 * header when the answer has no Last-Modified).
 */
export function notModified(request: FastifyRequest, etag: string, lastModified: unknown): boolean {
  const noneMatch = request.headers['if-none-match'];
  if (noneMatch !== undefined) return noneMatchHits(noneMatch, etag);
  const since = request.headers['if-modified-since'];
  if (since === undefined || typeof lastModified !== 'string') return false;
  const sinceSeconds = parseHttpDate(since.trim());
  const modifiedSeconds = parseHttpDate(lastModified);
  return sinceSeconds !== undefined && modifiedSeconds !== undefined && modifiedSeconds <= sinceSeconds;
}

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;

/** The headers of a 200 that a 304 does not carry (RFC 9110 §15.4.5: no representation metadata beyond the validators, Vary and caching). */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-disposition'];

/**
 * ETags and 304s for the successful JSON answers of GET and HEAD under `app` (pages, single items, the
 * changes feed): not problems (not 200), not streamed exports (no body in hand to hash), not other formats.
 * Every such answer gets `Cache-Control: private, no-cache`: a client's cache may keep it (a credential's
 * view is its own, so no shared cache) but must revalidate before each use, which is what the ETag is for.
 * A 304 still costs the query and the serialization (the tag is a hash of the answer); it saves the bytes.
 * Register after compression.ts's hooks, so that the tag of a 200 is fixed after the compressor chose.
 */
export function addConditionalRequests(app: FastifyInstance): void {
  // Before the routes' own onSend hooks and the compressor: the body is still the serialized JSON string, which
  // this hook hands on as UTF-8 bytes when it is large.
  // Callback hooks (here and below), not async ones: they run on every answer, and an async hook costs a
  // promise and a microtask turn each time.
  app.addHook('onSend', (request, reply, payload, done) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload);
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !JSON_TYPE.test(type)) return done(null, payload);
    // From here on a large answer is its bytes: hashed, measured, compressed and written as they are (utf8-body.ts).
    const body = answerBody(payload, reply.raw);
    // Without a negotiated coding the size does not matter (measuring a string walks it).
    const coding = request.coding ? codingOf(request, type, typeof body === 'string' ? Buffer.byteLength(body) : body.length) : undefined;
    const etag = entityTag(body, coding);
    reply.header('etag', etag);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
    if (!notModified(request, etag, reply.getHeader('last-modified'))) return done(null, body);
    reply.code(304);
    // An empty body rather than null: Fastify's HEAD handler reads the payload; the length goes below.
    done(null, '');
  });
  // After every route's own onSend hooks and the compressor's (pushed by onRoute, run in order of registration).
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...hooks, settle];
  });
}

/**
 * A 304 loses its body headers (Fastify would send `Content-Length: 0`, which would claim an empty 200);
 * a 200 whose compressor chose otherwise than foreseen (a client's `x-no-compression`) gets the tag of
 * what it does carry.
 */
function settle(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  if (reply.statusCode === 304) {
    for (const name of BODY_HEADERS) reply.removeHeader(name);
    return done(null, null);
  }
  const etag = reply.getHeader('etag');
  if (reply.statusCode !== 200 || typeof etag !== 'string') return done(null, payload);
  const sent = reply.getHeader('content-encoding');
  const coding = sent === 'gzip' || sent === 'br' ? sent : undefined;
  const suffix = coding ? SUFFIX[coding] : '';
  // The common case, our tag of the coding that was sent, needs no parsing.
  if (etag.length !== HASH_CHARS + 2 + suffix.length || !etag.endsWith(`${suffix}"`)) {
    const retagged = `"${opaque(etag)}${suffix}"`;
    if (retagged !== etag) reply.header('etag', retagged);
  }
  done(null, payload);
}
