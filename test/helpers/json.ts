import assert from 'node:assert/strict';

/** A JSON object from an answer body. */
export type Json = Record<string, unknown>;

/** Asserts `value` is a JSON object (not null, not an array) and returns it; `what` names it in the failure. */
export function object(value: unknown, what: string): Json {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is a JSON object`);
  return value as Json;
}
