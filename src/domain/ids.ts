/** The largest id a record can have: ids are 32-bit integer columns in PostgreSQL. */
const MAX_ID = 2_147_483_647;

/**
 * Reads an id as sent in a path or parameter. Returns it as a number, or undefined when it cannot
 * name a record (not a positive whole number, or beyond the id column's range).
 */
export function parseId(id: unknown): number | undefined {
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const text = String(id);
  if (!/^\d{1,10}$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 && value <= MAX_ID ? value : undefined;
}
