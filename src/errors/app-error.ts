import { PROBLEMS, type ProblemCode } from './codes.ts';

export interface FieldError {
  name: string;
  reason: string;
}

/** The one error type of the service. The error handler turns it into an RFC 9457 problem. */
export class AppError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ProblemCode, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export const invalidParameter = (name: string, reason: string): AppError =>
  new AppError('invalid_parameter', `Parameter "${name}" ${reason}.`, { errors: [{ name, reason }] });

export const notFound = (what: string): AppError => new AppError('not_found', `${what} was not found.`);
