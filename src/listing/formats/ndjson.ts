import { itemOf, type ExportLayout, type ExportRecord } from './columns.ts';

/** One NDJSON line (without its newline) of a record: exactly `JSON.stringify(itemOf(layout, record))`. */
export type LineEncoder = (record: ExportRecord) => string;

/** What JSON.stringify writes a string with escapes for: `"`, `\\`, control characters, and surrogates (lone ones are escaped; a pair is checked by JSON.stringify itself). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPES = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A property value as JSON.stringify writes it inside an object; undefined where it leaves the property out
 * (undefined, a function, a symbol). Strings, numbers and null, nearly every value of a row, are written here
 * directly (a string without anything to escape is only quoted); anything else (objects, arrays, booleans, a
 * bigint, which throws) goes through JSON.stringify itself. A finite number prints as JSON prints it (both use
 * Number's shortest round-trip form); NaN and ±Infinity are null.
 */
function valueJson(v: unknown): string | undefined {
  if (typeof v === 'string') return NEEDS_ESCAPES.test(v) ? JSON.stringify(v) : `"${v}"`;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (v === null) return 'null';
  return JSON.stringify(v) as string | undefined;
}

/** Names that an object would not keep in place: array indexes (JSON.stringify lists them first) and `__proto__` (not a property when assigned). */
export const misplaced = (name: string): boolean => name === '__proto__' || /^(0|[1-9][0-9]*)$/.test(name);

const encoders = new WeakMap<ExportLayout, LineEncoder>();

/**
 * The keys of a layout's lines in order (the shown fields, the nested values, the includes), or undefined when
 * an object would reorder or drop one (an index-like name, a name twice, `__proto__`): such a layout's lines
 * are JSON.stringify's own.
 */
export function lineEncoderNames(layout: ExportLayout): string[] | undefined {
  const names = [...layout.shape.shown.map((f) => f.name), ...layout.nestedKeys, ...layout.includeKeys];
  return new Set(names).size !== names.length || names.some(misplaced) ? undefined : names;
}

/**
 * The NDJSON line encoder of a layout, derived from it as `itemOf` is: the item's keys in the same order
 * (the shown fields, the nested values, the includes), each key's `"name":` prefix written once, and each
 * value written as JSON.stringify would write it. Hand-written in place of an object per row and JSON.stringify
 * for speed: encoding 400 000 product-parameter rows into bytes took 320 ms of CPU against 420 ms (best of six),
 * and an NDJSON snapshot of 1 172 164 of them about a tenth less CPU on SQLite
 * (bench/results/snapshots-2026-11-23-helperA.md). A layout whose names an object would reorder or drop (an
 * index-like name, a name twice, `__proto__`) gets `JSON.stringify(itemOf(…))` itself; a test compares both
 * on every resource.
 */
export function lineEncoder(layout: ExportLayout): LineEncoder {
  const known = encoders.get(layout);
  if (known) return known;
  const names = lineEncoderNames(layout);
  const slots: number[] = layout.shape.shown.map((_f, i) => i);
  let slot = layout.selected.length;
  for (let i = 0; i < layout.nestedKeys.length + layout.includeKeys.length; i++) slots.push(slot++);
  let encode: LineEncoder;
  if (!names) {
    encode = (record) => JSON.stringify(itemOf(layout, record));
  } else {
    // `{"id":` for the first key, `,"name":` for the others: a value left out (undefined) moves the opening brace on.
    const first = names.map((n) => `{${JSON.stringify(n)}:`);
    const next = names.map((n) => `,${JSON.stringify(n)}:`);
    const n = names.length;
    encode = (record) => {
      let line = '';
      for (let i = 0; i < n; i++) {
        const value = valueJson(record[slots[i]]);
        if (value === undefined) continue;
        line += (line === '' ? first[i] : next[i]) + value;
      }
      return line === '' ? '{}' : line + '}';
    };
  }
  encoders.set(layout, encode);
  return encode;
}
