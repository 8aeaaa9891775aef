import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, invalidParameter } from '../errors/app-error.ts';
import type { Shape } from './shape.ts';

/** What a cursor remembers: the sort, the filters, and the keyset position after the last row served. */
export interface CursorState {
  sort: string;
  filters: Record<string, string>;
  /** The sort key value of the last row ([value, id]; for sort=id just [id]). */
  after: Array<string | number>;
  /** The `fields` and `include` of the request it was issued for: a cursor-only request continues with them. */
  shape?: Shape;
}

// A cursor is `<payload>.<tag>`: the state in base64url JSON, and an HMAC-SHA256 of it (128 bits, enough for a
// tag nobody can see computed) under a key derived from the installation's hashing key. A client can read its
// cursor but not alter it: changing the keyset position, the sort or the filters (a cursor-only request
// re-applies them) breaks the tag, on every node of the installation alike.
const TAG_BYTES = 16;
let derived: { from: string; key: Buffer } | undefined;

/** The cursor key, derived for this one use so that a tag can never stand in for another keyed hash. */
function cursorKey(hashKey: string): Buffer {
  if (derived?.from !== hashKey) derived = { from: hashKey, key: createHmac('sha256', hashKey).update('store-data-api listing cursor v1').digest() };
  return derived.key;
}

const tagOf = (payload: string, hashKey: string): Buffer => createHmac('sha256', cursorKey(hashKey)).update(payload).digest().subarray(0, TAG_BYTES);

/** A cursor signed with the installation's hashing key (`ctx.hashKey`). */
export function encodeCursor(state: CursorState, hashKey: string): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, s: state.sort, f: state.filters, a: state.after, ...(state.shape ? { sh: state.shape } : {}) })).toString('base64url');
  return `${payload}.${tagOf(payload, hashKey).toString('base64url')}`;
}

const notOurs = () => invalidParameter('cursor', 'is not a cursor issued by this API, or it was altered');

const names = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((n) => typeof n === 'string'));
const validShape = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && names((v as Shape).fields) && names((v as Shape).include);

/** The state of a cursor this installation signed; a 400 naming `cursor` for anything else. */
export function decodeCursor(raw: string, hashKey: string): CursorState {
  const [payload, tag, ...rest] = raw.split('.');
  if (rest.length || !payload || !tag || !/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]+$/.test(tag)) throw notOurs();
  const given = Buffer.from(tag, 'base64url');
  if (given.length !== TAG_BYTES || !timingSafeEqual(given, tagOf(payload, hashKey))) throw notOurs();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  const c = parsed as { v?: unknown; s?: unknown; f?: unknown; a?: unknown; sh?: unknown };
  const valid =
    c !== null && typeof c === 'object' && c.v === 1 && typeof c.s === 'string' &&
    typeof c.f === 'object' && c.f !== null && !Array.isArray(c.f) &&
    Object.values(c.f).every((v) => typeof v === 'string' && !v.includes('\u0000')) &&
    Array.isArray(c.a) && c.a.length >= 1 && c.a.length <= 2 &&
    c.a.every((v) => (typeof v === 'string' && !v.includes('\u0000')) || (typeof v === 'number' && Number.isSafeInteger(v))) &&
    (c.sh === undefined || validShape(c.sh));
  if (!valid) throw notOurs();
  const state: CursorState = { sort: c.s as string, filters: c.f as Record<string, string>, after: c.a as Array<string | number> };
  if (c.sh !== undefined) state.shape = c.sh as Shape;
  return state;
}

/**
 * Reconciles a cursor with the request's own sort and filters. Each side that the request leaves out (the
 * sort; the filters as a whole) is inherited from the cursor, so `?cursor=…` alone continues the listing;
 * each side it sends must equal the cursor's, or the answer is a `cursor_mismatch`. Filters compare as a
 * whole: dropping one filter while sending another would otherwise widen or narrow the walk silently.
 */
export function reconcile(cursor: CursorState, sort: string | undefined, filters: Record<string, string>): { sort: string; filters: Record<string, string> } {
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => Object.hasOwn(b, k) && b[k] === v);
  const sortDiffers = sort !== undefined && sort !== cursor.sort;
  const filtersDiffer = Object.keys(filters).length > 0 && !same(filters, cursor.filters);
  if (sortDiffers || filtersDiffer) {
    throw new AppError('cursor_mismatch', 'The cursor was issued for other filters or another sort; send the same ones, or none, with it.', {
      errors: [{ name: 'cursor', reason: `does not match the ${sortDiffers ? 'sort' : 'filters'} of this request` }],
    });
  }
  return { sort: cursor.sort, filters: cursor.filters };
}
