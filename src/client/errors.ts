import type { Problem, StoreApiErrorCode } from './types.ts';

/** A failed call: the API's problem (RFC 9457) or the token endpoint's error, with the request id to quote to the operator. */
export class StoreApiError extends Error {
  override readonly name = 'StoreApiError';
  /** The HTTP status. */
  readonly status: number;
  /** Stable machine-readable code: `not_found`, `invalid_parameter`, `invalid_client`… */
  readonly code: StoreApiErrorCode;
  /** What went wrong, for a person. */
  readonly detail: string;
  /** Which parameters or fields were refused, and why (`invalid_parameter`, `invalid_body`). */
  readonly errors: NonNullable<Problem['errors']>;
  /** The request's id (`x-request-id`), also in the server's log line. */
  readonly requestId: string | undefined;
  /** The problem type's URL (its documentation), when the answer was a problem. */
  readonly type: string | undefined;

  constructor(init: { status: number; code: StoreApiErrorCode; detail: string; errors?: Problem['errors']; requestId?: string; type?: string }) {
    super(`${init.status} ${init.code}: ${init.detail}`);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.errors = init.errors ?? [];
    this.requestId = init.requestId;
    this.type = init.type;
  }

  /** From a failed answer and its body as openapi-fetch parsed it (JSON when it was JSON, else text). */
  static from(response: Response, body: unknown): StoreApiError {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (isProblem(body)) {
      return new StoreApiError({ status: response.status, code: body.code, detail: body.detail ?? body.title, errors: body.errors, requestId: body.requestId || requestId, type: body.type });
    }
    if (isTokenError(body)) {
      return new StoreApiError({ status: response.status, code: body.error, detail: body.error_description ?? body.error, requestId });
    }
    const text = typeof body === 'string' ? body.slice(0, 200) : '';
    return new StoreApiError({ status: response.status, code: 'unexpected_response', detail: `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`, requestId });
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function isProblem(body: unknown): body is Problem {
  return isRecord(body) && typeof body.code === 'string' && typeof body.status === 'number' && typeof body.title === 'string';
}

function isTokenError(body: unknown): body is { error: Extract<StoreApiErrorCode, string>; error_description?: string } {
  return isRecord(body) && typeof body.error === 'string';
}
