import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';

export interface ProblemJson {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: Array<{ name: string; reason: string }>;
}

interface Answer {
  statusCode?: number;
  status?: number;
  headers: LightMyRequestResponse['headers'] | Headers;
}

const header = (res: Answer, name: string): string | undefined => {
  if (res.headers instanceof Headers) return res.headers.get(name) ?? undefined;
  const v = res.headers[name];
  return v === undefined ? undefined : String(v);
};

/**
 * Checks that an answer is an RFC 9457 problem with this status and code: the media type, the `type` URL,
 * `requestId` equal to the x-request-id header, no stack trace or SQL, and (when given) an `errors` entry
 * naming the parameter or field.
 */
export function assertProblem(res: Answer, body: string, status: number, code: string, name?: string): ProblemJson {
  const actual = res.statusCode ?? res.status;
  assert.equal(actual, status, `expected ${status} ${code}, got ${actual}: ${body}`);
  assert.match(header(res, 'content-type') ?? '', /^application\/problem\+json/);
  const problem = JSON.parse(body) as ProblemJson;
  assert.equal(problem.status, status);
  assert.equal(problem.code, code, body);
  assert.ok(problem.type.endsWith(`/problems/${code.replace(/_/g, '-')}`), problem.type);
  assert.equal(typeof problem.title, 'string');
  assert.equal(typeof problem.detail, 'string');
  assert.ok(problem.requestId.length > 0);
  assert.equal(problem.requestId, header(res, 'x-request-id'));
  assert.doesNotMatch(body, /\n\s+at |\.ts:\d+|node_modules|select .* from|SQLITE_|syntax error/i, 'a problem must not leak internals');
  if (name !== undefined) {
    assert.ok(problem.errors?.some((e) => e.name === name), `errors should name "${name}": ${body}`);
  }
  return problem;
}

/** The same for an `app.inject` answer. */
export const problemOf = (res: LightMyRequestResponse, status: number, code: string, name?: string): ProblemJson =>
  assertProblem(res, res.body, status, code, name);
