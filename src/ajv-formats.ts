import type { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';

// ajv-formats is CommonJS with a `default` beside module.exports; under NodeNext the callable is the default import.
const addFormatsFn = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

const fullDateTime = fullFormats['date-time'] as { validate: (s: string) => boolean; compare: (a: string, b: string) => number | undefined };
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** The places of digits in `yyyy-mm-ddThh:mm:ss`. */
const DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
const isDigit = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
};
const two = (s: string, i: number): number => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;

/** `yyyy-mm-ddThh:mm:ss[.f…]Z` with digits in range (no leap second); false sends the text to ajv-formats' own check. */
function isPlainUtc(s: string): boolean {
  const n = s.length;
  if (n < 20 || n > 30 || s.charCodeAt(n - 1) !== 90 /* Z */) return false;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 /* T */ || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false;
  for (const i of DIGITS) if (!isDigit(s, i)) return false;
  if (n > 20) {
    if (n === 21 || s.charCodeAt(19) !== 46 /* . */) return false;
    for (let i = 20; i < n - 1; i++) if (!isDigit(s, i)) return false;
  }
  const year = two(s, 0) * 100 + two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && leap ? 29 : DAYS[month]) && two(s, 11) <= 23 && two(s, 14) <= 59 && two(s, 17) <= 59;
}

/**
 * RFC 3339 date-time, as ajv-formats' full format checks it, with a fast path for the form the API writes
 * (`2026-04-20T20:22:47.588Z`: UTC, `T`, digits where digits go, in range). Anything else (another offset, a
 * space, a leap second, a bad character) goes to ajv-formats' own check, so the answer is always the same as
 * its (a property test compares them). Why: checking the two date-times of each of the 950 000 items of a
 * follower's first copy took 1.9 s of its 14 s of CPU through ajv-formats' split and three regular expressions
 * per value.
 */
export const isDateTime = (s: string): boolean => isPlainUtc(s) || fullDateTime.validate(s);

/** ajv-formats' full formats, with `date-time` checked by isDateTime (the same answers, sooner). */
export function addFormats(ajv: Ajv): Ajv {
  addFormatsFn(ajv);
  ajv.addFormat('date-time', { ...fullDateTime, type: 'string', validate: isDateTime });
  return ajv;
}
