// Whole requests for one operation: path and query parameters, a body in one of its media types (or a
// wrong one), the credential, and headers; each part valid most of the time and hostile the rest.
import fc from 'fast-check';
import type { Method, OperationRef, OpenApiDocument, Parameter } from './document.ts';
import { fuzzValue, jsonText, unraw, validValue, type Hints } from './values.ts';

export interface FuzzRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** The credentials a request may carry. */
export interface Credentials {
  adminToken: string;
  /** A token with every scope. */
  allScopes: string;
  /** A token with only this scope, by scope. */
  byScope: ReadonlyMap<string, string>;
}

/** Pieces put into a URL as they are, not percent-encoded: broken escapes, NUL, dot segments. */
const RAW_SEGMENTS = ['%FF', '%00', '%', '%zz', '%C0%AF', '%ED%A0%80', '..', '.', '%2e%2e', '..%2F..%2F', '%2F', '1;2', '1%3B2', '+', 'x'.repeat(101), '%20', '1%00'];
const RAW_QUERY = ['%00', '%FF', '%', '%zz', '%C0%AF', '%2e%2e%2f', '+', '%2B', '%26', '=', '==', ';', '%3B', '%0d%0aX-Injected:1', 'a&b', '%E2%80%AE'];
const UNKNOWN_PARAMS = ['foo', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'limit[]', 'sort[0]', 'page', 'offset', 'fields', ''];

/** The text of a value in a URL; undefined when it cannot be percent-encoded (a lone surrogate). */
function encode(text: string): string | undefined {
  try {
    return encodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** A generated value as URL text: arrays as a comma list, objects as JSON, raw number literals as they are. */
function asText(value: unknown): string {
  if (typeof value === 'string') return unraw(value);
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(asText).join(',');
  if (typeof value === 'object') return jsonText(value) ?? '';
  return String(value);
}

const wire = (value: unknown): string => encode(asText(value)) ?? '%ED%A0%80';

/** A parameter's documented examples count as valid values beside the schema's. */
function examplesOf(p: Parameter): unknown[] {
  const out: unknown[] = [];
  if (p.example !== undefined) out.push(p.example);
  for (const e of Object.values(p.examples ?? {})) out.push(e.value);
  return out;
}

/** Whether a request is drawn to be valid throughout (its 2xx body gets checked) or fuzzed in every part. */
export type Mode = 'valid' | 'fuzzed';

function paramValue(doc: OpenApiDocument, p: Parameter, hints: Hints, raw: readonly string[], mode: Mode): fc.Arbitrary<string> {
  const examples = examplesOf(p);
  const withExamples = examples.length ? new Map([...hints, [p.name, [...(hints.get(p.name) ?? []), ...examples]]]) : hints;
  if (mode === 'valid') return validValue(doc, p.schema, withExamples, p.name, 0, true).map(wire);
  return fc.oneof(
    { arbitrary: fuzzValue(doc, p.schema, withExamples, p.name).map(wire), weight: 12 },
    { arbitrary: fc.constantFrom(...raw), weight: 1 },
  );
}

function pathOf(doc: OpenApiDocument, o: OperationRef, hints: Hints, mode: Mode): fc.Arbitrary<string> {
  const params = (o.op.parameters ?? []).filter((p) => p.in === 'path');
  if (params.length === 0) return fc.constant(o.path);
  return fc.tuple(...params.map((p) => paramValue(doc, p, hints, RAW_SEGMENTS, mode))).map((values) =>
    params.reduce((path, p, i) => path.replace(`{${p.name}}`, values[i]), o.path),
  );
}

function queryOf(doc: OpenApiDocument, o: OperationRef, hints: Hints, mode: Mode): fc.Arbitrary<string> {
  // A cursor remembers its filters and sort: a valid request sends it alone (a walk to the next page).
  const cursors = hints.get('cursor') ?? [];
  const params = (o.op.parameters ?? []).filter((p) => p.in === 'query' && !(mode === 'valid' && p.name === 'cursor'));
  const declared = params.map((p) =>
    fc.tuple(fc.integer({ min: 0, max: 99 }), paramValue(doc, p, hints, RAW_QUERY, mode), paramValue(doc, p, hints, RAW_QUERY, mode)).map(([roll, a, b]) => {
      if (roll >= (p.required ? 95 : 35) && !(p.required && mode === 'valid')) return [];
      // Now and then the same parameter twice (`limit=1&limit=2`).
      return roll < 4 && mode === 'fuzzed' ? [`${p.name}=${a}`, `${p.name}=${b}`] : [`${p.name}=${a}`];
    }),
  );
  const unknown = mode === 'valid' ? fc.constant(null) : fc.option(fc.tuple(fc.constantFrom(...UNKNOWN_PARAMS), fc.constantFrom('1', '', 'x', '%00')).map(([k, v]) => `${encode(k)}=${v}`), { freq: 10 });
  const query = fc.tuple(fc.tuple(...declared), unknown).map(([parts, extra]) => {
    const all = [...parts.flat(), ...(extra ? [extra] : [])];
    return all.length ? `?${all.join('&')}` : '';
  });
  if (mode === 'fuzzed' || cursors.length === 0) return query;
  const walk = fc.tuple(fc.constantFrom(...cursors), fc.option(fc.integer({ min: 1, max: 50 }))).map(([c, limit]) => `?cursor=${wire(c)}${limit === null ? '' : `&limit=${limit}`}`);
  return fc.oneof({ arbitrary: query, weight: 3 }, { arbitrary: walk, weight: 1 });
}

function authorization(o: OperationRef, creds: Credentials, hints: Hints, mode: Mode): fc.Arbitrary<string | undefined> {
  const malformed = fc.constantFrom('Bearer', 'Bearer ', 'Basic Og==', 'Basic !!!', `Bearer ${'A'.repeat(8192)}`, `Bearer ${creds.allScopes}x`, `Bearer ${creds.allScopes.slice(0, -1)}`,
    `bearer ${creds.allScopes}`, `Bearer  ${creds.allScopes}`, `Token ${creds.allScopes}`, `Bearer ${creds.adminToken}x`, 'Bearer \u00e9', 'Bearer %00', 'Bearer null');
  const none = fc.constant(undefined);
  if (mode === 'valid') return fc.constant(o.auth.kind === 'admin' ? `Bearer ${creds.adminToken}` : o.auth.kind === 'oauth2' ? `Bearer ${creds.allScopes}` : undefined);
  if (o.auth.kind === 'admin') {
    return fc.oneof({ arbitrary: fc.constant(`Bearer ${creds.adminToken}`), weight: 30 }, none, fc.constant(`Bearer ${creds.allScopes}`), malformed);
  }
  if (o.auth.kind === 'oauth2') {
    const needed = new Set(o.auth.scopes);
    const others = [...creds.byScope].filter(([scope]) => !needed.has(scope)).map(([, token]) => `Bearer ${token}`);
    return fc.oneof({ arbitrary: fc.constant(`Bearer ${creds.allScopes}`), weight: 30 }, none, fc.constantFrom(...others), malformed, fc.constant(`Bearer ${creds.adminToken}`));
  }
  const extra = (hints.get('authorization') ?? []) as string[];
  return fc.oneof({ arbitrary: none, weight: 10 }, ...(extra.length ? [{ arbitrary: fc.constantFrom(...extra), weight: 3 }] : []), malformed);
}

/** Bodies no schema describes: broken JSON, deep nesting, prototype keys, a BOM, more than the body limit. */
const HOSTILE_BODIES = ['', '{', '}', 'null', '[]', '"x"', '0', 'true', '{"a":1,"a":2}', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}',
  '\uFEFF{}', '{"a":"\\ud800"}', '{"a":"\u0000"}', '['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(2000) + '1' + '}'.repeat(2000), `{"name":"${'x'.repeat(1_100_000)}"}`,
  'grant_type=client_credentials&client_id=%FF', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n', 'a=1&a=2&__proto__[x]=1'];

const WRONG_TYPES = ['text/plain', 'application/xml', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'multipart/form-data',
  'application/octet-stream', 'application/json, text/plain', '*/*', 'application/merge-patch+json', 'garbage'];

/**
 * The hints a body draws from: references to other items (`brandId`, `productId`) and what the token and
 * webhook routes need, not the values of unique fields (a new product with an existing article number is a
 * 409 every time).
 */
const bodyHints = (hints: Hints): Hints => new Map([...hints].filter(([name]) => /(Id|^id|^ids|^client_\w+|^grant_type|^scope|^url|^events|^delivery|^since)$/.test(name)));

/** A multipart/form-data body of these fields. */
function multipart(fields: Record<string, unknown>): { type: string; body: string } {
  const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
  const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${asText(v)}\r\n`);
  return { type: `multipart/form-data; boundary=${boundary}`, body: `${parts.join('')}--${boundary}--\r\n` };
}

function bodyOf(doc: OpenApiDocument, o: OperationRef, hints: Hints, mode: Mode): fc.Arbitrary<{ type?: string; payload?: string }> {
  const content = o.op.requestBody?.content;
  if (mode === 'valid' && content?.['application/json']?.schema) {
    return validValue(doc, content['application/json'].schema, bodyHints(hints), undefined, 0, true).map((v) => ({ type: 'application/json', payload: jsonText(v) ?? 'null' }));
  }
  const hostile = fc.tuple(fc.option(fc.constantFrom(...WRONG_TYPES, 'application/json'), { freq: 8 }), fc.constantFrom(...HOSTILE_BODIES))
    .map(([type, payload]) => ({ type: type ?? undefined, payload }));
  const randomJson = fc.json({ maxDepth: 3 }).map((payload) => ({ type: 'application/json', payload }));
  if (o.method === 'GET') return fc.constant({});
  if (!content) {
    if (mode === 'valid') return fc.constant({});
    // A body where none is declared is ignored or refused, never a crash.
    return fc.oneof({ arbitrary: fc.constant({}), weight: 8 }, randomJson, hostile);
  }
  const typed = Object.entries(content).map(([type, media]) => {
    const value = media.schema ? fuzzValue(doc, media.schema, hints) : fc.jsonValue();
    if (type === 'application/json') return value.map((v) => ({ type, payload: jsonText(v) ?? 'null' }));
    if (type === 'application/x-www-form-urlencoded') {
      return value.map((v) => ({ type, payload: v && typeof v === 'object' ? Object.entries(v).map(([k, x]) => `${wire(k)}=${wire(x)}`).join('&') : asText(v) }));
    }
    if (type === 'multipart/form-data') return value.map((v) => (v && typeof v === 'object' ? (({ type: t, body }) => ({ type: t, payload: body }))(multipart(v as Record<string, unknown>)) : { type, payload: asText(v) }));
    return value.map((v) => ({ type, payload: asText(v) }));
  });
  return fc.oneof({ arbitrary: fc.oneof(...typed), weight: 12 }, { arbitrary: randomJson, weight: 1 }, { arbitrary: hostile, weight: 2 });
}

const ACCEPTS = ['*/*', 'application/json', 'text/csv', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/event-stream', 'application/xml', 'text/html;q=0.9, */*;q=0.1',
  'application/json;q=0', 'text/csv;q=0.5, application/json', 'garbage', '', 'application/problem+json', '*/*;q=abc'];
const REQUEST_IDS = ['abc', 'x'.repeat(200), '../../', "' or 1=1", 'id with spaces', '%00'];

/**
 * Requests for one operation: two in five valid in every part (so that 2xx answers, whose bodies are
 * checked, are common), the others fuzzed in every part.
 */
export function requestsFor(doc: OpenApiDocument, o: OperationRef, creds: Credentials, hints: Hints): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ arbitrary: requestsOf(doc, o, creds, hints, 'valid'), weight: 2 }, { arbitrary: requestsOf(doc, o, creds, hints, 'fuzzed'), weight: 3 });
}

export function requestsOf(doc: OpenApiDocument, o: OperationRef, creds: Credentials, hints: Hints, mode: Mode): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    path: pathOf(doc, o, hints, mode),
    query: queryOf(doc, o, hints, mode),
    body: bodyOf(doc, o, hints, mode),
    authorization: authorization(o, creds, hints, mode),
    accept: mode === 'valid' ? fc.constant(null) : fc.option(fc.constantFrom(...ACCEPTS), { freq: 3 }),
    requestId: mode === 'valid' ? fc.constant(null) : fc.option(fc.constantFrom(...REQUEST_IDS), { freq: 8 }),
  }).map(({ path, query, body, authorization: auth, accept, requestId }) => {
    const headers: Record<string, string> = {};
    if (auth !== undefined) headers.authorization = auth;
    if (accept !== null) headers.accept = accept;
    if (requestId !== null) headers['x-request-id'] = requestId;
    if (body.type !== undefined) headers['content-type'] = body.type;
    return { method: o.method, url: path + query, headers, ...(body.payload !== undefined ? { payload: body.payload } : {}) };
  });
}
