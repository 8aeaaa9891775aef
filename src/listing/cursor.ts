import { AppError, invalidParameter } from '../errors/app-error.ts';

/** What a cursor remembers: the sort, the filters, and the keyset position after the last row served. */
export interface CursorState {
  sort: string;
  filters: Record<string, string>;
  /** The sort key value of the last row ([value, id]; for sort=id just [id]). */
  after: Array<string | number>;
}

export function encodeCursor(state: CursorState): string {
  return Buffer.from(JSON.stringify({ v: 1, s: state.sort, f: state.filters, a: state.after })).toString('base64url');
}

export function decodeCursor(raw: string): CursorState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidParameter('cursor', 'is not a cursor issued by this API');
  }
  const c = parsed as { v?: unknown; s?: unknown; f?: unknown; a?: unknown };
  const valid =
    c !== null && typeof c === 'object' && c.v === 1 && typeof c.s === 'string' &&
    typeof c.f === 'object' && c.f !== null && !Array.isArray(c.f) &&
    Object.values(c.f).every((v) => typeof v === 'string' && !v.includes('\u0000')) &&
    Array.isArray(c.a) && c.a.length >= 1 && c.a.length <= 2 &&
    c.a.every((v) => (typeof v === 'string' && !v.includes('\u0000')) || (typeof v === 'number' && Number.isSafeInteger(v)));
  if (!valid) throw invalidParameter('cursor', 'is not a cursor issued by this API');
  return { sort: c.s as string, filters: c.f as Record<string, string>, after: c.a as Array<string | number> };
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
