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

// Cursors known to be ours, by their text, with their state: those this process signed, and those whose tag it
// checked. A client paging through a listing sends back the cursor it was just given, and checking the tag and
// reading the payload again (HMAC, base64, JSON, the checks below) took ~10 µs of a deep page's ~400 µs of CPU. An
// entry holds for the key it was signed or checked with only. The states are frozen: every request that sends the
// cursor shares one. Bounded in count and in the length of a cursor kept (one with a long `fields` list is checked
// each time); the oldest entry goes first.
export const MAX_KNOWN_CURSORS = 2000;
const MAX_KNOWN_LENGTH = 1024;
const known = new Map<string, { hashKey: string; state: CursorState }>();

function remember(raw: string, hashKey: string, state: CursorState): void {
  if (raw.length > MAX_KNOWN_LENGTH) return;
  if (known.size >= MAX_KNOWN_CURSORS) known.delete(known.keys().next().value as string);
  known.set(raw, { hashKey, state });
}

/** How many cursors are known (for tests of the bound). */
export const knownCursorCount = (): number => known.size;

/** A frozen copy of a state as `decodeCursor` would return it. */
function frozen(c: Payload): CursorState {
  const state: CursorState = { sort: c.s as string, filters: Object.freeze({ ...(c.f as Record<string, string>) }), after: Object.freeze([...(c.a as Array<string | number>)]) as Array<string | number> };
  const sh = c.sh as Shape | undefined;
  if (sh !== undefined) {
    state.shape = Object.freeze({
      ...(sh.fields ? { fields: Object.freeze([...sh.fields]) } : {}),
      ...(sh.include ? { include: Object.freeze([...sh.include]) } : {}),
    });
  }
  return Object.freeze(state);
}

/** A cursor signed with the installation's hashing key (`ctx.hashKey`). */
export function encodeCursor(state: CursorState, hashKey: string): string {
  const c: Payload = { v: 1, s: state.sort, f: state.filters, a: state.after, ...(state.shape ? { sh: state.shape } : {}) };
  const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
  const raw = `${payload}.${tagOf(payload, hashKey).toString('base64url')}`;
  // Only a state that reads back as itself: one decodeCursor would refuse (a NUL in a filter) is checked, and refused, when it comes back.
  if (known.get(raw)?.hashKey !== hashKey && valid(c)) remember(raw, hashKey, frozen(c));
  return raw;
}

const notOurs = () => invalidParameter('cursor', 'is not a cursor issued by this API, or it was altered');

const names = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((n) => typeof n === 'string'));
const validShape = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && names((v as Shape).fields) && names((v as Shape).include);

interface Payload { v?: unknown; s?: unknown; f?: unknown; a?: unknown; sh?: unknown }

/** Whether a cursor's payload is one this API writes. */
function valid(c: Payload): boolean {
  return c !== null && typeof c === 'object' && c.v === 1 && typeof c.s === 'string' &&
    typeof c.f === 'object' && c.f !== null && !Array.isArray(c.f) &&
    Object.values(c.f).every((v) => typeof v === 'string' && !v.includes('\u0000')) &&
    Array.isArray(c.a) && c.a.length >= 1 && c.a.length <= 2 &&
    c.a.every((v) => (typeof v === 'string' && !v.includes('\u0000')) || (typeof v === 'number' && Number.isSafeInteger(v))) &&
    (c.sh === undefined || validShape(c.sh));
}

/** The state of a cursor this installation signed (frozen); a 400 naming `cursor` for anything else. */
export function decodeCursor(raw: string, hashKey: string): CursorState {
  const hit = known.get(raw);
  if (hit?.hashKey === hashKey) return hit.state;
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
  if (!valid(parsed as Payload)) throw notOurs();
  const state = frozen(parsed as Payload);
  remember(raw, hashKey, state);
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
