/**
 * Whether a database error is a broken constraint (unique, foreign key, not null, check) on SQLite or
 * PostgreSQL: the statement was refused for the data it carried, not for the connection or the server.
 */
export function isConstraintViolation(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  // PostgreSQL's class 23 is "integrity constraint violation"; better-sqlite3 names SQLite's extended codes.
  return code.startsWith('SQLITE_CONSTRAINT') || /^23\d{3}$/.test(code);
}
