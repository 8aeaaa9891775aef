import { invalidParameter } from '../errors/app-error.ts';

const MAX_LIST = 1000;

/** A comma list of positive integers (`1,2,3`). */
export function parseIdList(name: string, raw: string): number[] {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > MAX_LIST) throw invalidParameter(name, `must list at most ${MAX_LIST} values`);
  const ids = parts.map((p) => (/^[1-9]\d{0,15}$/.test(p) ? Number(p) : NaN));
  if (ids.some((n) => !Number.isSafeInteger(n))) throw invalidParameter(name, 'must be a comma-separated list of positive integers');
  return [...new Set(ids)];
}

/** A comma list of non-empty strings. */
export function parseStringList(name: string, raw: string): string[] {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > MAX_LIST) throw invalidParameter(name, `must list at most ${MAX_LIST} values`);
  if (parts.some((p) => p === '')) throw invalidParameter(name, 'must be a comma-separated list of non-empty values');
  return [...new Set(parts)];
}

export function parseEnumList(name: string, raw: string, allowed: readonly string[]): string[] {
  const values = parseStringList(name, raw);
  const bad = values.filter((v) => !allowed.includes(v));
  if (bad.length) throw invalidParameter(name, `has unknown value "${bad[0]}"; allowed: ${allowed.join(', ')}`);
  return values;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
// The offset's sign may arrive as a space: an unencoded `+` in a query string decodes to one.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+\- ]\d{2}:?\d{2})?$/;

/** Milliseconds of a UTC calendar date and time, or NaN when a part is out of range (Feb 30, 24:00). */
function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  // setUTCFullYear, unlike Date.UTC, takes years below 100 literally ("0001-01-01" is a common "since ever").
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const ms = d.getTime();
  const same = d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day &&
    d.getUTCHours() === hour && d.getUTCMinutes() === minute && d.getUTCSeconds() === second;
  return same ? ms : NaN;
}

/**
 * An RFC 3339 date-time (an offset is optional and means UTC when absent) or a date (the start of that day,
 * UTC, or with `endOfDay` the last millisecond of it). Returns the canonical stored form.
 */
export function parseInstant(name: string, raw: string, endOfDay = false): string {
  const value = raw.trim();
  const date = DATE_ONLY.exec(value);
  if (date) {
    const ms = utcMillis(Number(date[1]), Number(date[2]), Number(date[3]));
    if (Number.isNaN(ms)) throw invalidParameter(name, 'is not a valid date');
    return new Date(endOfDay ? ms + 86_400_000 - 1 : ms).toISOString();
  }
  // Trailing space may be a decoded `+` of a bare offset hour; try with it first.
  const m = DATE_TIME.exec(raw.replace(/^\s+/, '')) ?? DATE_TIME.exec(value);
  if (!m) throw invalidParameter(name, 'must be an RFC 3339 date-time (2026-01-31T12:00:00Z) or a date (2026-01-31)');
  let ms = utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  if (m[7]) ms += Math.floor(Number(`0${m[7]}`) * 1000);
  const offset = m[8] && m[8].toUpperCase() !== 'Z' ? /^([+\- ])(\d{2}):?(\d{2})$/.exec(m[8]) : null;
  if (offset) {
    const [hours, minutes] = [Number(offset[2]), Number(offset[3])];
    if (hours > 23 || minutes > 59) ms = NaN;
    ms -= (offset[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  if (Number.isNaN(ms)) throw invalidParameter(name, 'is not a valid date-time');
  return new Date(ms).toISOString();
}

export function parseBoolean(name: string, raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw invalidParameter(name, 'must be true or false');
}
