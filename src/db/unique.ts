/**
 * True when `error` is a unique-constraint violation on either database. SQLite names the columns
 * ("UNIQUE constraint failed: users.email"); PostgreSQL reports SQLSTATE 23505 with the index name.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '23505') return true;
  return typeof message === 'string' && message.includes('UNIQUE constraint failed');
}

/**
 * True when `error` is a foreign-key violation on either database: PostgreSQL's SQLSTATE 23503,
 * SQLite's "FOREIGN KEY constraint failed".
 */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '23503') return true;
  return typeof message === 'string' && message.includes('FOREIGN KEY constraint failed');
}
