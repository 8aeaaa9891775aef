// The boundary sweep: every parameter and every body field of an operation, one at a time, set to each
// value that has broken a server before (a 64-bit overflow, NUL, broken UTF-8, a huge length), the rest of
// the request valid. Random draws would meet a given one of these only now and then; the sweep meets every
// one on every run. It runs before the random requests, as fast-check examples.
import fc from 'fast-check';
import { deref, typesOf, type JsonSchema, type OpenApiDocument, type OperationRef } from './document.ts';
import { requestsOf, type Credentials, type FuzzRequest } from './requests.ts';
import { jsonText, rawNumber, validValue, type Hints } from './values.ts';

const HUGE = '9223372036854775808';

/** URL texts (already encoded where it matters) for a parameter of this schema. */
function wireEdges(s: JsonSchema, inPath: boolean): string[] {
  const common = ['%00', '%FF', '%C0%AF', HUGE, '-1', encodeURIComponent("' or 1=1 --"), encodeURIComponent('__proto__'), '%E2%80%AE'];
  const types = typesOf(s);
  const numeric = types.includes('integer') || types.includes('number');
  const out = numeric ? [...common, '0', '1.5', '1e3', 'abc', '-9223372036854775809', '18446744073709551616'] : [...common, 'x'.repeat(2000)];
  if (s.maximum !== undefined) out.push(String(s.maximum + 1));
  if (inPath) out.push('x'.repeat(101), '..%2F');
  return out;
}

/** JSON values for a body field of this schema. */
function bodyEdges(s: JsonSchema): unknown[] {
  const types = typesOf(s);
  const out: unknown[] = [null, '\u0000', HUGE, rawNumber(HUGE), rawNumber('1e400'), [], {}];
  if (types.includes('integer') || types.includes('number')) out.push(2147483648, -2147483649, -1, 0, 1.5, 1e308, '1');
  if (types.includes('string')) out.push('', 'x'.repeat((s.maxLength ?? 100_000) + 1), 12, '=HYPERLINK("http://evil.example")', 'a\u0000b');
  if (types.includes('boolean')) out.push('true', 1);
  if (types.includes('array')) out.push('x', Array.from({ length: (s.maxItems ?? 1000) + 1 }, () => 1));
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type FieldPath = Array<string | number>;

/** Every field under an object schema to a depth of two, with its path (a number steps into an array). */
function fieldsOf(doc: OpenApiDocument, s: JsonSchema, value: Record<string, unknown>, at: FieldPath, depth: number): Array<[FieldPath, JsonSchema]> {
  const out: Array<[FieldPath, JsonSchema]> = [];
  for (const [name, raw] of Object.entries(s.properties ?? {})) {
    const field = deref(doc, raw);
    out.push([[...at, name], field]);
    if (depth >= 1) continue;
    const inner = value[name];
    if (typesOf(field).includes('object') && field.properties) out.push(...fieldsOf(doc, field, isObject(inner) ? inner : {}, [...at, name], depth + 1));
    const items = field.items ? deref(doc, field.items) : undefined;
    if (items?.properties && Array.isArray(inner) && isObject(inner[0])) out.push(...fieldsOf(doc, items, inner[0], [...at, name, 0], depth + 1));
  }
  return out;
}

/** A copy of `body` with the value at `path` replaced. */
function withField(body: unknown, path: FieldPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list: unknown[] = Array.isArray(body) ? [...(body as unknown[])] : [];
    list[head] = withField(list[head], rest, value);
    return list;
  }
  const object = isObject(body) ? { ...body } : {};
  object[head] = withField(object[head], rest, value);
  return object;
}

/** The boundary requests of one operation, each a valid request (drawn with this seed) with one part changed. */
export function sweepRequests(doc: OpenApiDocument, o: OperationRef, creds: Credentials, hints: Hints, seed: number): FuzzRequest[] {
  const [base] = fc.sample(requestsOf(doc, o, creds, hints, 'valid'), { seed, numRuns: 1 });
  const out: FuzzRequest[] = [];
  const [pathPart] = base.url.split('?');
  const params = o.op.parameters ?? [];

  // Path parameters: the template filled with valid values, then each parameter in turn with each edge.
  const pathValues = new Map(params.filter((p) => p.in === 'path').map((p) => [p.name, fc.sample(validValue(doc, p.schema, hints, p.name, 0, true), { seed, numRuns: 1 })[0]]));
  const fill = (name: string, edge: string): string => o.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === name ? edge : encodeURIComponent(String(pathValues.get(n)))));
  for (const p of params.filter((x) => x.in === 'path')) {
    for (const edge of wireEdges(deref(doc, p.schema), true)) out.push({ ...base, url: fill(p.name, edge) });
  }
  // Query parameters: alone, on the valid path.
  for (const p of params.filter((x) => x.in === 'query')) {
    for (const edge of wireEdges(deref(doc, p.schema), false)) out.push({ ...base, url: `${pathPart}?${p.name}=${edge}` });
  }
  // Body fields: the valid JSON body with one field changed (fields of nested objects and of the first
  // element of arrays of objects too, such as an order's `billingAddress.city` and `items[0].productId`).
  const schema = o.op.requestBody?.content['application/json']?.schema;
  if (schema && base.headers['content-type'] === 'application/json' && base.payload !== undefined) {
    const parsed = JSON.parse(base.payload) as unknown;
    const body = isObject(parsed) ? parsed : {};
    for (const [path, field] of fieldsOf(doc, deref(doc, schema), body, [], 0)) {
      for (const edge of bodyEdges(field)) out.push({ ...base, payload: jsonText(withField(body, path, edge)) });
    }
  }
  return out;
}
