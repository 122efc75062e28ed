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

/**
 * The body of every V3 failure: `error` for people, and for a refused field `errors`, a map from its
 * name to the rules it broke (the example keeps documentation tools from inventing key names).
 */
export const errorBody = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'What went wrong' },
    errors: {
      type: 'object',
      description: 'The refused field and the rule it broke',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      example: { name: ["can't be blank"] },
    },
  },
  required: ['error'],
  additionalProperties: false,
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
export const time = { type: 'string', format: 'date-time' } as const;
export const flag = { type: 'boolean' } as const;

/** What a route's OpenAPI entry says about it, besides its shapes. */
export interface RouteText {
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
}

function routeText({ tags, summary, description }: RouteText) {
  return { tags, summary, ...(description === undefined ? {} : { description }) };
}

/**
 * The OpenAPI schema of a list route: filter, sort and page parameters, the pagination headers, and
 * `{KEY: [record, ...]}`; 404 too when the path names a parent (`params`). Returns it.
 */
export function listRouteSchema<R>(text: RouteText, key: string, record: R, params?: object) {
  return {
    ...routeText(text),
    headers: v3Headers,
    ...(params === undefined ? {} : { params }),
    querystring: listQuery,
    response: {
      200: {
        headers: paginationHeaders,
        type: 'object',
        properties: { [key]: { type: 'array', items: record } },
      },
      ...(params === undefined ? {} : { 404: errorBody }),
      422: errorBody,
      ...commonErrors,
    },
  } as const;
}

/** The OpenAPI schema of a show route: one record by id (404 when missing). Returns it. */
export function showRouteSchema<O>(text: RouteText, one: O, params: object = idParam()) {
  return {
    ...routeText(text),
    headers: v3Headers,
    params,
    querystring: signedQuery,
    response: { 200: one, 404: errorBody, ...commonErrors },
  } as const;
}

/** The OpenAPI schema of a create route: 201 with the record, 422 for bad input. Returns it. */
export function createRouteSchema<O>(text: RouteText, one: O, body: object, params?: object) {
  return {
    ...routeText(text),
    headers: v3Headers,
    ...(params === undefined ? {} : { params }),
    body,
    response:
      params === undefined
        ? { 201: one, 422: errorBody, ...commonErrors }
        : { 201: one, 404: errorBody, 422: errorBody, ...commonErrors },
  } as const;
}

/** The OpenAPI schema of an update route: 200 with the record, 404 when missing, 422 for bad input. */
export function updateRouteSchema<O>(text: RouteText, one: O, body: object, params: object = idParam()) {
  return {
    ...routeText(text),
    headers: v3Headers,
    params,
    body,
    response: { 200: one, 404: errorBody, 422: errorBody, ...commonErrors },
  } as const;
}

/**
 * The OpenAPI schema of a destroy route: 200 with `{}` (or `answer`), 404 when missing, and 422
 * when `refusable` (a destroy the rules can refuse). Returns it.
 */
export function destroyRouteSchema(
  text: RouteText,
  options: { params?: object; refusable?: boolean; answer?: object } = {},
) {
  return {
    ...routeText(text),
    headers: v3Headers,
    params: options.params ?? idParam(),
    querystring: signedQuery,
    response: {
      200: options.answer ?? emptyObject,
      404: errorBody,
      ...(options.refusable ? { 422: errorBody } : {}),
      ...commonErrors,
    },
  } as const;
}
