/**
 * JSON Schema pieces shared by the V2 route schemas. Like V3's, they document the API (OpenAPI at
 * /api/openapi.json) and validate nothing: the domain owns every rule.
 */

/** The four parameters every V2 call carries; `api_token` is signed like any other parameter. */
export const v2SignedParams = {
  api_token: { type: 'string', description: "The user's API token (signed as a parameter; no header)" },
  timestamp: { type: 'string', pattern: '^\\d+$', description: 'Request time, epoch milliseconds' },
  nonce: { type: 'string', pattern: '^\\d+$', description: 'Digits; with the timestamp, used once per user' },
  signature: {
    type: 'string',
    pattern: '^[0-9a-fA-F]{64}$',
    description: 'HMAC-SHA256 hex of the canonical message (api_token included)',
  },
} as const;

const SIGNED = ['api_token', 'timestamp', 'nonce', 'signature'] as const;

/** A V2 read or delete: only the signed parameters, in the query string. */
export const v2SignedQuery = {
  type: 'object',
  properties: { ...v2SignedParams },
  required: [...SIGNED],
} as const;

/** Signed parameters plus the call's own, `required` naming those api.md requires. */
export function v2Params(
  properties: Readonly<Record<string, unknown>>,
  required: readonly string[] = [],
): Record<string, unknown> {
  return {
    type: 'object',
    properties: { ...v2SignedParams, ...properties },
    required: [...required, ...SIGNED],
  };
}

/** Path parameters that are all required integer ids. */
export function v2PathIds(...names: readonly string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((name) => [name, { type: 'integer' }])),
    required: [...names],
  };
}

/** A V2 answer with no body at all (V2's success of most writes, and nearly every failure). */
export function emptyAnswer(description: string): Record<string, unknown> {
  return { description, type: 'null' };
}

/** The JSON body of an authentication failure, the one V2 failure with a body (contract §3). */
export const notAuthorized = {
  description:
    'Authentication failed ({"error":"You are not authorized to access this page."}), ' +
    "or the caller's role may not do this (empty body)",
  type: 'object',
  properties: { error: { type: 'string' } },
} as const;

export const nullableInteger = { type: ['integer', 'null'] } as const;
export const nullableString = { type: ['string', 'null'] } as const;
export const epochSeconds = { type: ['integer', 'null'], description: 'Epoch seconds' } as const;
export const flagInput = {
  type: ['boolean', 'string', 'integer'],
  description: 'true, false, 1 or 0',
} as const;
export const timeInput = {
  type: ['integer', 'string'],
  description: 'Epoch seconds (also accepted: epoch milliseconds, ISO 8601)',
} as const;
