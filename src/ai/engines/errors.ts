import { AppError } from '../../errors/app-error.ts';

/** An engine's own failure as a problem; the cause stays attached for the log, never for the client. */
export function engineFailed(detail: string, cause?: unknown): AppError {
  const error = new AppError('engine_failed', detail);
  error.cause = cause;
  return error;
}

export function engineTimedOut(detail: string, cause?: unknown): AppError {
  const error = new AppError('engine_timeout', detail);
  error.cause = cause;
  return error;
}
