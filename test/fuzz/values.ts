// Values for one schema: valid ones drawn from the schema (and from real fixtures, so that requests reach
// the data), boundary values around its limits, hostile strings and values of the wrong type.
import fc from 'fast-check';
import { deref, typesOf, type JsonSchema, type OpenApiDocument } from './document.ts';

/**
 * Real values by field or parameter name (ids, article numbers, cursors, a client secret) read from the
 * seeded store: a random `productId` almost never exists, a real one reaches the code behind the 404.
 */
export type Hints = ReadonlyMap<string, readonly unknown[]>;

/**
 * JSON cannot say 9223372036854775808 or 1e400 through JSON.stringify (they round, or become null): such
 * numbers travel as this marker and are put into the body text as they are (see `jsonText`).
 */
const RAW = '\u0001raw:';
export const rawNumber = (literal: string): string => `${RAW}${literal}\u0001`;
/** A generated string as text: a raw number literal without its marker. */
export const unraw = (text: string): string => (text.startsWith(RAW) && text.endsWith('\u0001') ? text.slice(RAW.length, -1) : text);
/** The JSON text of a generated body, with raw number literals in place. */
export const jsonText = (value: unknown): string | undefined => JSON.stringify(value)?.replace(/"\\u0001raw:([^"\\]*)\\u0001"/g, '$1');

/** Strings that have broken parsers, databases, object lookups and terminals before. */
export const HOSTILE_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'a\u0000b', '%00', '%FF', '%', '%%32%65', '../', '..\\..\\', '../../etc/passwd', '..%2F..%2F',
  "' or 1=1 --", '" or ""="', "'; drop table products; --", '1; select pg_sleep(5)', '\\', '"', "'", '`',
  'constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'null', 'undefined', 'NaN',
  'Infinity', '-Infinity', 'true', '[]', '{}', '{"a":1}', '<script>alert(1)</script>', '${7*7}', '{{7*7}}',
  '=HYPERLINK("http://evil.example","x")', '+1+1', '-1+1', '@SUM(A1)', '\t=1', '\r=1', '\n', '\r\n', '\u2028',
  '\u202Eevil\u202C', '\u200F', '\u200B', '\uFEFF', '😀', '👩‍👩‍👧‍👦', 'e\u0301', 'Ⅻ', '١٢٣', '日本語', 'ß', 'İ',
  '\uD800', '\uDFFF', '\uFFFF', '\u0085', 'x'.repeat(256), 'x'.repeat(5000), 'é'.repeat(2000), '*'.repeat(30) + 'x',
  '1,2,3', ',', ',,', '1,,2', '-1', '0', '1e3', '0x10', '01', '+1', ' 1', '1 ', '1.0', '1.5', '9223372036854775808',
  '2024-02-30', '2024-13-01T00:00:00Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-01-01T00:00:00+25:00',
  'msg_', 'msg_' + '0'.repeat(26), 'whsec_', 'Bearer x',
];

/** Integers around the ranges that break: 32-bit, 2^53, 64-bit, and the schema's own limits (± 1). */
function integerEdges(s: JsonSchema): unknown[] {
  const out: unknown[] = [0, -1, 1, 2147483647, 2147483648, -2147483649, 4294967296, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1.5, -0, 1e21];
  for (const v of [s.minimum, s.maximum]) if (v !== undefined) out.push(v, v - 1, v + 1);
  out.push(rawNumber('9223372036854775807'), rawNumber('9223372036854775808'), rawNumber('-9223372036854775809'), rawNumber('1e400'), rawNumber('100000000000000000000000000000'));
  return out;
}

function numberEdges(s: JsonSchema): unknown[] {
  const out: unknown[] = [0, -0, -1, 0.1, 1e-300, 5e-324, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2];
  for (const v of [s.minimum, s.maximum]) if (v !== undefined) out.push(v, v - 1e-9, v + 1e-9, v - 1, v + 1);
  out.push(rawNumber('1e400'), rawNumber('-1e400'), rawNumber('1.00000000000000000000000000001'));
  return out;
}

function stringEdges(s: JsonSchema): unknown[] {
  const out: unknown[] = ['', 'a'];
  for (const n of [s.minLength, s.maxLength]) {
    if (n === undefined) continue;
    out.push('a'.repeat(n), '😀'.repeat(n));
    if (n > 0) out.push('a'.repeat(n - 1));
    out.push('a'.repeat(n + 1));
  }
  for (const e of s.enum ?? []) if (typeof e === 'string') out.push(e.toUpperCase(), `${e} `, ` ${e}`, `${e}\u0000`, `${e},${e}`);
  return out;
}

/** Values of every type but the schema's. */
function wrongTypes(s: JsonSchema): unknown[] {
  const types = typesOf(s);
  const all: Array<[string, unknown[]]> = [
    ['string', ['1', 'abc', '']],
    ['integer', [1, 0, -5]],
    ['number', [1.5, -0.5]],
    ['boolean', [true, false]],
    ['null', [null]],
    ['array', [[], [1], ['a', 'b'], [null]]],
    ['object', [{}, { a: 1 }, JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')]],
  ];
  return all.filter(([t]) => !types.includes(t) && !(t === 'integer' && types.includes('number'))).flatMap(([, v]) => v);
}

const isoDate = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });

function validString(s: JsonSchema): fc.Arbitrary<string> {
  if (s.format === 'date-time') return isoDate.map((d) => d.toISOString());
  if (s.format === 'email') return fc.emailAddress().filter((e) => s.maxLength === undefined || e.length <= s.maxLength);
  if (s.format === 'uri') return fc.webUrl();
  if (s.pattern) {
    const re = new RegExp(s.pattern);
    return fc.stringMatching(re).filter((v) => (s.minLength ?? 0) <= v.length && v.length <= (s.maxLength ?? Infinity));
  }
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, Math.max(minLength, 40));
  return fc.oneof(fc.string({ minLength, maxLength }), fc.string({ minLength, maxLength, unit: 'grapheme' }), fc.string({ minLength, maxLength, unit: 'binary' }));
}

/** Whether a hinted value fits the schema (a product's `status` is not an order's): type, enum, range, length, pattern. */
function fits(s: JsonSchema, value: unknown): boolean {
  if (s.enum && !s.enum.includes(value)) return false;
  const types = typesOf(s);
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (types.length && !types.includes(type) && !(type === 'integer' && types.includes('number'))) return false;
  if (typeof value === 'number' && ((s.minimum !== undefined && value < s.minimum) || (s.maximum !== undefined && value > s.maximum))) return false;
  if (typeof value === 'string') {
    if ((s.minLength !== undefined && value.length < s.minLength) || (s.maxLength !== undefined && value.length > s.maxLength)) return false;
    if (s.pattern && !new RegExp(s.pattern).test(value)) return false;
  }
  return true;
}

/**
 * A value that the schema accepts. With hints for its name: in `strict` draws (a request valid throughout)
 * only the hinted values that fit, otherwise mostly those and sometimes one from the schema.
 */
export function validValue(doc: OpenApiDocument, schema: JsonSchema, hints: Hints, name?: string, depth = 0, strict = false): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  const hinted = (name !== undefined ? hints.get(name) : undefined)?.filter((v) => fits(s, v)) ?? [];
  if (hinted.length && strict) return fc.constantFrom(...hinted);
  const fromSchema = validFromSchema(doc, s, hints, depth, strict);
  return hinted.length ? fc.oneof({ arbitrary: fc.constantFrom(...hinted), weight: 3 }, { arbitrary: fromSchema, weight: 1 }) : fromSchema;
}

function validFromSchema(doc: OpenApiDocument, s: JsonSchema, hints: Hints, depth: number, strict: boolean): fc.Arbitrary<unknown> {
  if (s.enum?.length) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  const alternatives = s.anyOf ?? s.oneOf;
  if (s.properties && alternatives?.every((a) => a.required && !a.properties && !a.type)) {
    // `anyOf: [{ required: [a] }, { required: [b] }]` beside the properties: one of them is required too.
    return fc.oneof(...alternatives.map((a) => validFromSchema(doc, { ...s, anyOf: undefined, oneOf: undefined, required: [...(s.required ?? []), ...a.required!] }, hints, depth, strict)));
  }
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => validValue(doc, a, hints, undefined, depth + 1, strict)));
  const types = typesOf(s);
  if (types.length > 1) return fc.oneof(...types.map((type) => validFromSchema(doc, { ...s, type }, hints, depth, strict)));
  switch (types[0]) {
    case 'integer': {
      // Small values most of the time: a quantity of 2^31 makes a total too large to store, every time.
      const min = Math.max(s.minimum ?? -1000, -Number.MAX_SAFE_INTEGER);
      const max = Math.min(s.maximum ?? 100_000, Number.MAX_SAFE_INTEGER);
      return fc.oneof({ arbitrary: fc.integer({ min, max: Math.min(max, min + 100) }), weight: 3 }, fc.integer({ min, max }));
    }
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'string':
      return validString(s);
    case 'array': {
      const item = s.items ? validValue(doc, s.items, hints, undefined, depth + 1, strict) : fc.jsonValue({ maxDepth: 1 });
      const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, Math.max(s.minItems ?? 0, 4)) };
      return s.uniqueItems ? fc.uniqueArray(item, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(item, constraints);
    }
    case 'object':
    case undefined:
      if (!s.properties) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      return objectOf(s, hints, (inner, name) => validValue(doc, inner, hints, name, depth + 1, strict), strict ? 'strict' : 'valid');
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Keys that are not in the schema; some of them name parts of Object.prototype. */
const UNKNOWN_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'extra', 'id', 'createdAt', '', ' ', 'a'.repeat(300)];

/**
 * An object of the schema's properties. `strict`: every required one, most of the hinted ones (the token
 * request's `client_id`), half of the rest. `valid`: the required ones almost always, the others sometimes.
 * `hostile`: like `valid`, and now and then a property the schema does not know. Own `__proto__` keys are
 * defined, not set, so that they reach the JSON text.
 */
function objectOf(s: JsonSchema, hints: Hints, value: (inner: JsonSchema, name: string) => fc.Arbitrary<unknown>, kind: 'strict' | 'valid' | 'hostile'): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {});
  const required = new Set(s.required ?? []);
  const keepIf = (name: string, roll: number): boolean => {
    if (kind === 'strict') return required.has(name) || roll < (hints.has(name) ? 18 : 10);
    return required.has(name) ? roll !== 0 : roll < 8;
  };
  const entries = props.map(([name, inner]) =>
    fc.tuple(fc.constant(name), fc.integer({ min: 0, max: 19 }), value(inner, name)).map(([n, roll, v]) => ({ n, v, keep: keepIf(n, roll) })),
  );
  const extra = kind === 'hostile' ? fc.option(fc.tuple(fc.constantFrom(...UNKNOWN_KEYS), fc.jsonValue({ maxDepth: 2 })), { freq: 6 }) : fc.constant(null);
  return fc.tuple(fc.tuple(...entries), extra).map(([kept, more]) => {
    const out: Record<string, unknown> = {};
    for (const e of kept) if (e.keep) Object.defineProperty(out, e.n, { value: e.v, enumerable: true, writable: true, configurable: true });
    if (more) Object.defineProperty(out, more[0], { value: more[1], enumerable: true, writable: true, configurable: true });
    if (kind === 'strict' && s.minProperties && Object.keys(out).length < s.minProperties && kept.length) {
      const first = kept.find((e) => !Object.hasOwn(out, e.n))!;
      out[first.n] = first.v;
    }
    return out;
  });
}

/**
 * A value for a schema as a fuzzer sends it: mostly valid, else a boundary value, a hostile string or a
 * value of the wrong type. Nested objects and arrays fuzz their own members.
 */
export function fuzzValue(doc: OpenApiDocument, schema: JsonSchema, hints: Hints, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  const types = typesOf(s);
  const edges: unknown[] = [];
  if (types.includes('integer')) edges.push(...integerEdges(s));
  else if (types.includes('number')) edges.push(...numberEdges(s));
  if (types.includes('string')) edges.push(...stringEdges(s));
  if (types.includes('array')) edges.push([], Array.from({ length: (s.maxItems ?? 50) + 1 }, () => 'a'));
  const wrong = wrongTypes(s);
  const arbitraries: Array<fc.WeightedArbitrary<unknown>> = [{ arbitrary: validValue(doc, s, hints, name, depth), weight: 6 }];
  if (depth < 3 && types.includes('object') && s.properties) {
    arbitraries.push({ arbitrary: objectOf(s, hints, (inner, n) => fuzzValue(doc, inner, hints, n, depth + 1), 'hostile'), weight: 6 });
  }
  if (depth < 3 && types.includes('array') && s.items) {
    arbitraries.push({ arbitrary: fc.array(fuzzValue(doc, s.items, hints, undefined, depth + 1), { maxLength: 4 }), weight: 2 });
  }
  if (edges.length) arbitraries.push({ arbitrary: fc.constantFrom(...edges), weight: 2 });
  arbitraries.push({ arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 1 });
  if (wrong.length) arbitraries.push({ arbitrary: fc.constantFrom(...wrong), weight: 1 });
  return fc.oneof(...arbitraries);
}
