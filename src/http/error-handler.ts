import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionLoss } from '../db/connection-loss.ts';
import { AppError, type FieldError } from '../errors/app-error.ts';
import { validationReason, type ValidationError } from '../errors/validation-reasons.ts';
import type { ProblemCode } from '../errors/codes.ts';
import { sendProblem } from './problem.ts';

type AjvError = ValidationError;

/** Turns Ajv's errors into `{ name, reason }` pairs that name the parameter or field. */
function fieldErrors(validation: AjvError[]): FieldError[] {
  const out = validation.map((e) => {
    const r = validationReason(e);
    return r.name ? r : { ...r, name: '(body)' };
  });
  // One message per name is enough; anyOf/oneOf branches repeat themselves.
  return out.filter((e, i) => out.findIndex((o) => o.name === e.name) === i);
}

const LIMIT_REASON = new Map([['limit', 'must be an integer between 1 and 1000']]);

/**
 * Query parameters arrive as text, or as an array when given twice (`status=a&status=b`); a string-typed
 * parameter that fails its type check was therefore repeated. (A Map, not an object: a parameter named
 * `constructor` must not find Object's.)
 */
function queryErrors(validation: AjvError[]): FieldError[] {
  const repeated = new Set(validation.filter((e) => e.keyword === 'type' && e.params.type === 'string').map((e) => e.instancePath.replace(/^\//, '')));
  return fieldErrors(validation).map((e) => {
    if (LIMIT_REASON.has(e.name)) return { ...e, reason: LIMIT_REASON.get(e.name)! };
    if (repeated.has(e.name)) return { ...e, reason: 'must be given once (several values go in one comma list)' };
    return e;
  });
}

const STATUS_CODES: Record<number, ProblemCode> = {
  400: 'invalid_body', 401: 'invalid_token', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed', 406: 'not_acceptable',
  408: 'request_timeout', 409: 'conflict', 410: 'cursor_expired', 413: 'payload_too_large', 414: 'uri_too_long', 415: 'unsupported_media_type',
  429: 'rate_limited', 431: 'headers_too_large', 503: 'service_unavailable',
};

const UNAVAILABLE_DB_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED']);

/** Seconds a client is asked to wait when the database connection was lost or could not be made. */
export const CONNECTION_LOSS_RETRY_AFTER = '1';

export interface Classified {
  code: ProblemCode;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/** Maps any thrown error to a problem. Everything unexpected is a 500 whose detail hides the cause. */
export function classify(error: FastifyError | AppError | Error): Classified {
  if (error instanceof AppError) return { code: error.code, detail: error.message, errors: error.errors, headers: error.headers };
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    const inQuery = fe.validationContext === 'querystring' || fe.validationContext === 'params';
    const errors = inQuery ? queryErrors(fe.validation) : fieldErrors(fe.validation);
    const first = errors[0];
    return inQuery
      ? { code: 'invalid_parameter', detail: first ? `Parameter "${first.name}" ${first.reason}.` : 'Invalid parameters.', errors }
      : { code: 'invalid_body', detail: first ? `Field "${first.name || '(body)'}" ${first.reason}.` : 'Invalid request body.', errors };
  }
  const dbCode = String((error as { code?: unknown }).code ?? '');
  // Races past our own checks (two writers creating the same article number) end at a constraint: still a 409.
  if (dbCode === '23505' || dbCode === 'SQLITE_CONSTRAINT_UNIQUE' || dbCode === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return { code: 'conflict', detail: 'The change clashes with an existing item (a unique value is already used).' };
  }
  if (dbCode === '23503' || dbCode === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return { code: 'conflict', detail: 'The change breaks a reference to another item.' };
  }
  // A database that is locked by another process past busy_timeout, restarting, failing over or out of
  // connections is a passing condition, not a bug: 503 with a hint to retry.
  if (isConnectionLoss(error)) {
    return { code: 'service_unavailable', detail: 'The database cannot be reached right now; retry shortly.', headers: { 'retry-after': CONNECTION_LOSS_RETRY_AFTER } };
  }
  if (UNAVAILABLE_DB_CODES.has(dbCode)) {
    return { code: 'service_unavailable', detail: 'The database is busy or unreachable; retry shortly.', headers: { 'retry-after': '1' } };
  }
  // Raised by Fastify's router (through `frameworkErrors`): their messages would echo the whole path.
  if (fe.code === 'FST_ERR_BAD_URL') return { code: 'malformed_request', detail: 'The URL path is not valid percent-encoded UTF-8.' };
  if (fe.code === 'FST_ERR_MAX_PARAM_LENGTH') return { code: 'uri_too_long', detail: 'A path parameter is longer than 100 characters.' };
  const status = fe.statusCode ?? 500;
  if (status === 413) return { code: 'payload_too_large', detail: 'The request body is too large.' };
  if (status === 415) return { code: 'unsupported_media_type', detail: fe.message };
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (malformed JSON, empty body) carry safe messages.
    return { code: STATUS_CODES[status] ?? 'invalid_body', detail: fe.message };
  }
  return { code: 'internal_error', detail: 'An unexpected error occurred; it has been logged with this requestId.' };
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export type ErrorShaper = (request: FastifyRequest, reply: FastifyReply, problem: Classified) => FastifyReply;

/**
 * The error handler of `app` and the plugins it registers: every error classified (and a bug logged) the same
 * way, then answered in `shape`. A plugin whose errors take another shape (the token endpoint's RFC 6749 errors)
 * calls this on its own instance.
 */
export function shapeErrors(app: FastifyInstance, shape: ErrorShaper): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    const problem = classify(error);
    if (problem.code === 'internal_error') request.log.error({ err: error }, 'request failed');
    return shape(request, reply, problem);
  });
}

/** Problems (RFC 9457) for every error, and for requests no route takes: 405 with Allow when another method would, else 404. */
export function registerErrorHandling(app: FastifyInstance, publicUrl: string): void {
  shapeErrors(app, (request, reply, problem) => sendProblem(request, reply, publicUrl, problem.code, problem.detail, problem.errors, problem.headers));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    // A known URL with another method is a 405 that says which methods it has (RFC 9110 §15.5.6). A route of
    // this very method that found nothing (a missing file under /docs) is a plain 404.
    const own = app.findRoute({ method: request.method as (typeof METHODS)[number], url: path });
    const allowed = own ? [] : METHODS.filter((m) => m !== request.method && app.findRoute({ method: m, url: path }));
    if (allowed.length > 0) {
      return sendProblem(request, reply, publicUrl, 'method_not_allowed', `${request.method} is not allowed on ${path}; it answers ${allowed.join(', ')}.`, undefined, { allow: allowed.join(', ') });
    }
    return sendProblem(request, reply, publicUrl, 'not_found', `No route ${request.method} ${path}.`);
  });
}
