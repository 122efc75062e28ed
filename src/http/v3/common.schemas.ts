/**
 * JSON Schema pieces shared by the V3 route schemas. They document the API (OpenAPI at
 * /api/openapi.json); validation and messages belong to the domain.
 */

export const signedParams = {
  timestamp: { type: 'string', pattern: '^\\d+$', description: 'Request time, epoch milliseconds' },
  nonce: { type: 'string', pattern: '^\\d+$', description: 'Digits; with the timestamp, used once per user' },
  signature: {
    type: 'string',
    pattern: '^[0-9a-fA-F]{64}$',
    description: 'HMAC-SHA256 hex of the canonical message',
  },
} as const;

export const signedQuery = {
  type: 'object',
  properties: { ...signedParams },
  required: ['timestamp', 'nonce', 'signature'],
} as const;

export const listQuery = {
  type: 'object',
  properties: {
    ...signedParams,
    filter: {
      type: 'string',
      description:
        'Stringified JSON {"field": {"op": operand}}; ops eq, not_eq, gt, gte, lt, lte, in, not_in, like, null',
    },
    sort: {
      type: 'string',
      description: 'Stringified JSON [{"field": "asc|desc"}, ...]; default id ascending',
    },
    page: { type: 'integer', minimum: 1, default: 1 },
    limit: { type: 'integer', minimum: 1, maximum: 300, default: 300 },
  },
  required: ['timestamp', 'nonce', 'signature'],
} as const;

export const v3Headers = {
  type: 'object',
  properties: {
    accept: {
      type: 'string',
      description: 'Must contain application/vnd.procwise.v3 (or application/vnd.service.v3)',
    },
    authorization: { type: 'string', description: 'Token token=<api_token>' },
  },
  required: ['accept', 'authorization'],
} as const;

export const errorBody = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
  required: ['error'],
} as const;

export const paginationHeaders = {
  'X-Pagination-Item-Count': { type: 'integer' },
  'X-Pagination-Page-Count': { type: 'integer' },
  'X-Pagination-Page': { type: 'integer' },
  'X-Pagination-Limit': { type: 'integer' },
} as const;

export const idParam = (name = 'id') =>
  ({ type: 'object', properties: { [name]: { type: 'integer' } }, required: [name] }) as const;

export const emptyObject = { type: 'object', additionalProperties: false } as const;

/** The error answers every signed V3 route may give. */
export const commonErrors = {
  403: { description: 'Not authorized (any signature, token or scope failure)', ...errorBody },
  406: { description: 'Accept does not name V3', ...errorBody },
} as const;

/** Field types shared by the record schemas. */
export const nullableString = { type: ['string', 'null'] } as const;
export const nullableInteger = { type: ['integer', 'null'] } as const;
export const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
export const flag = { type: 'boolean' } as const;
