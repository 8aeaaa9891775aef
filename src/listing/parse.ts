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
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/**
 * An RFC 3339 date-time (an offset is optional and means UTC when absent) or a date (the start of that day,
 * UTC, or with `endOfDay` the last millisecond of it). Returns the canonical stored form.
 */
export function parseInstant(name: string, raw: string, endOfDay = false): string {
  const value = raw.trim();
  let ms: number;
  const date = DATE_ONLY.exec(value);
  if (date) {
    ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    if (new Date(ms).getUTCDate() !== Number(date[3])) throw invalidParameter(name, 'is not a valid date');
    if (endOfDay) ms += 86_400_000 - 1;
  } else {
    const m = DATE_TIME.exec(value);
    if (!m) throw invalidParameter(name, 'must be an RFC 3339 date-time (2026-01-31T12:00:00Z) or a date (2026-01-31)');
    const offset = m[8] && m[8].toUpperCase() !== 'Z' ? m[8].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2') : 'Z';
    const fraction = m[7] ? m[7].slice(0, 4) : '';
    ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${fraction}${offset}`);
    if (Number.isNaN(ms) || Number(m[2]) > 12 || Number(m[3]) > 31 || Number(m[4]) > 23 || Number(m[5]) > 59) {
      throw invalidParameter(name, 'is not a valid date-time');
    }
  }
  if (Number.isNaN(ms)) throw invalidParameter(name, 'is not a valid date');
  return new Date(ms).toISOString();
}

export function parseBoolean(name: string, raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw invalidParameter(name, 'must be true or false');
}
