/**
 * Whether an error means the database could not be reached or dropped the connection: a passing condition
 * (a restart, a failover, an operator ending sessions, an idle-connection reset), not a bug. Requests answer
 * 503 with Retry-After for these; background work waits and tries again.
 */

/** Error codes of the socket (Node) and of PostgreSQL (SQLSTATE) that say the connection is gone or refused. */
const CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  // admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down, in recovery)
  '57P01', '57P02', '57P03',
  // too_many_connections: the server has no slot for another connection
  '53300',
]);

/**
 * pg's own errors carry no code, only these messages: the socket closed under a client ("terminated
 * unexpectedly"), a client used after that ("not queryable"), no connection within connectionTimeoutMillis
 * (a new one: "due to connection timeout"; a free one from the pool: "timeout exceeded").
 */
const MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
];

export function isConnectionLoss(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  const code = String((error as { code?: unknown }).code ?? '');
  // Class 08: connection_exception and its subclasses (08000, 08003, 08006, 08001, 08004, ...).
  if (CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  // A FATAL (or PANIC) report ends its session: the backend is gone, whatever the SQLSTATE (a database that
  // does not accept connections now, 55000; no slot, 53300; an operator's termination, 57P01).
  const severity = (error as { severity?: unknown }).severity;
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  if (MESSAGES.includes(error.message)) return true;
  // pg-pool wraps a connect timeout (cause: the socket's error); Node wraps a refused dual-stack connect.
  if (error.cause !== undefined && isConnectionLoss(error.cause, depth + 1)) return true;
  return error instanceof AggregateError && error.errors.some((e) => isConnectionLoss(e, depth + 1));
}
