/**
 * What the server derives from the route schemas beyond Fastify's own use of them: the parameter
 * names a route declares (for `X-Ignored-Params`), and the finishing of each route's entry in the
 * OpenAPI document (descriptions, the statuses every route of an API family can answer, exact
 * record shapes). Route schema files describe each route; this module adds what is common, once.
 */

import { errorBody as V3_ERROR } from './v3/common.schemas.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parameters every signed call carries besides its own. */
const SIGNING_PARAMS = ['timestamp', 'nonce', 'signature'] as const;

/** The property names of an object schema, through allOf/anyOf/oneOf. */
function propertyNames(schema: unknown, into: Set<string>): void {
  if (!isObject(schema)) return;
  if (isObject(schema.properties)) for (const name of Object.keys(schema.properties)) into.add(name);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const parts = schema[key];
    if (Array.isArray(parts)) for (const part of parts) propertyNames(part, into);
  }
}

const declaredCache = new WeakMap<object, ReadonlySet<string>>();

/**
 * The parameter names a route knows: those its schema declares in the query string, body and path,
 * plus the signing parameters. Returns the set (cached per schema object).
 */
export function declaredParamNames(schema: object): ReadonlySet<string> {
  const cached = declaredCache.get(schema);
  if (cached !== undefined) return cached;
  const names = new Set<string>(SIGNING_PARAMS);
  const route = schema as Json;
  for (const part of ['querystring', 'body', 'params'] as const) propertyNames(route[part], names);
  declaredCache.set(schema, names);
  return names;
}

/** At most this many names are listed in `X-Ignored-Params`; a longer list ends with a count. */
const MAX_LISTED = 20;
/** A listed name is cut to this many characters (after percent-encoding). */
const MAX_NAME_LENGTH = 100;

/**
 * The value of `X-Ignored-Params` for the parameter names `ignored` (already sorted): each name
 * percent-encoded (a header holds only visible ASCII, and a comma in a name would split it), joined
 * by `, `; past MAX_LISTED names the rest are counted (`(+5 more)`). Returns the header text.
 */
export function ignoredParamsHeader(ignored: readonly string[]): string {
  const listed = ignored
    .slice(0, MAX_LISTED)
    // A JSON key can hold a lone surrogate, which encodeURIComponent refuses; it becomes U+FFFD.
    .map((name) => encodeURIComponent(name.toWellFormed()).slice(0, MAX_NAME_LENGTH));
  if (ignored.length > MAX_LISTED) listed.push(`(+${ignored.length - MAX_LISTED} more)`);
  return listed.join(', ');
}

/**
 * The names in `sent` that `schema` does not declare, sorted in byte order. Returns an empty list
 * when every name is known.
 */
export function ignoredParams(schema: object, sent: readonly string[]): string[] {
  const known = declaredParamNames(schema);
  return sent
    .filter((name) => !known.has(name))
    .sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

// ---- The OpenAPI document ----

type Family = 'v3' | 'v2' | 'room' | 'files' | 'staff';

function familyOf(url: string): Family | undefined {
  if (url.startsWith('/api/v3/')) return 'v3';
  if (url.startsWith('/api/room/') || url.startsWith('/api/mobile/')) return 'room';
  if (url.startsWith('/files/')) return 'files';
  if (url.startsWith('/auth/') || url === '/users/sign_in.json') return 'staff';
  if (url.startsWith('/api/')) return 'v2';
  return undefined;
}

const EMPTY = { type: 'null' } as const;

const FILE_ANSWER = {
  description: 'The file, with its stored content type and a Content-Disposition naming it',
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
} as const;

/** Descriptions of the statuses, used where a route's schema gives none. */
const STATUS_TEXT: Readonly<Record<string, string>> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '400': 'The body cannot be read (malformed JSON, or JSON whose top level is not an object)',
  '403': 'Not authorized',
  '404': 'No such record, or one outside the caller’s scope',
  '406': 'Accept names no V3 media type',
  '409': 'The record’s state does not allow this',
  '413': 'The body is larger than the service accepts',
  '415': 'The file’s content is not of an accepted type',
  '422': 'A parameter is missing or invalid: `errors` names it',
  '429': 'Too many requests: wait as long as Retry-After says',
  '503': 'The database is unavailable: retry after Retry-After seconds',
};

/** The failures every route of a family can answer, whatever it does, with their bodies. */
function commonFailures(family: Family, hasPathParams: boolean): Json {
  const v3Like = family !== 'v2';
  const body = v3Like ? V3_ERROR : EMPTY;
  const failures: Json = {
    400: body,
    413: body,
    503: { ...body, headers: { 'Retry-After': { type: 'integer', description: 'Seconds' } } },
  };
  if (hasPathParams) failures[404] = body;
  return failures;
}

/**
 * Makes every object schema with properties exact, down through properties, items and unions:
 * `additionalProperties: false` (no undocumented field is answered) and, unless it says otherwise,
 * every property required (the presenters always write every field, null when empty). Returns the
 * schema changed in place.
 */
function exact(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const part of schema) exact(part);
    return;
  }
  if (!isObject(schema)) return;
  if (isObject(schema.properties)) {
    schema.additionalProperties ??= false;
    schema.required ??= Object.keys(schema.properties);
    for (const property of Object.values(schema.properties)) exact(property);
  }
  exact(schema.items);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) exact(schema[key]);
}

/** The media type a V3 request names in Accept, offered as the header's default in the document. */
const V3_MEDIA_TYPE = 'application/vnd.procwise.v3';
/** Said of each signing parameter and the token header of a V3 route in the document. */
const SIGNED_ONLY =
  'Required for a signed request (docs/signing.md); not sent with the console session cookie.';

/**
 * Marks `names` as not required in a request schema (querystring, body or headers) and says in
 * their descriptions that signed requests need them, down through allOf/anyOf/oneOf. Changes the
 * schema in place.
 */
function signedOnly(schema: unknown, names: readonly string[]): void {
  if (!isObject(schema)) return;
  if (Array.isArray(schema.required)) {
    const required = schema.required.filter((name) => !names.includes(String(name)));
    if (required.length > 0) schema.required = required;
    else delete schema.required;
  }
  if (isObject(schema.properties)) {
    for (const name of names) {
      const property = schema.properties[name];
      if (!isObject(property)) continue;
      const said = typeof property.description === 'string' ? `${property.description}. ` : '';
      property.description = `${said}${SIGNED_ONLY}`;
    }
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const parts = schema[key];
    if (Array.isArray(parts)) for (const part of parts) signedOnly(part, names);
  }
}

/**
 * A V3 route's request as the document gives it: the signing parameters and the token header are
 * required only of a signed request, since the staff session cookie replaces them (docs/
 * staff-sign-in.md, "The console speaks V3"), so `/api/docs` "Try it out" can send a request
 * without them; Accept offers the V3 media type as its default. Changes `copy` in place.
 */
function documentCookieRequests(copy: Json): void {
  signedOnly(copy.querystring, SIGNING_PARAMS);
  signedOnly(copy.body, SIGNING_PARAMS);
  signedOnly(copy.headers, ['authorization']);
  const headers = isObject(copy.headers) && isObject(copy.headers.properties) ? copy.headers.properties : {};
  if (isObject(headers.accept)) headers.accept.default ??= V3_MEDIA_TYPE;
}

/**
 * Completes one route's schema for the OpenAPI document (the swagger `transform`): a description
 * for every answer, the failures common to the route's API family, exact answer shapes, and for V3
 * the signing parameters required of signed requests only. The route itself keeps its schema; only
 * the document changes. Returns the completed copy.
 */
export function completeRouteSchema(schema: object | undefined, url: string): Json | undefined {
  if (schema === undefined) return undefined;
  const family = familyOf(url);
  const copy = structuredClone(schema) as Json;
  if (family === undefined || copy.hide === true) return copy;
  if (family === 'v3') documentCookieRequests(copy);
  const response: Json = isObject(copy.response) ? copy.response : {};
  const hasPathParams = isObject(copy.params);
  // An expiring file address answers the file itself, as stored, under its original name.
  if (family === 'files') response[200] ??= structuredClone(FILE_ANSWER);
  for (const [status, answer] of Object.entries(commonFailures(family, hasPathParams))) {
    response[status] ??= structuredClone(answer);
  }
  for (const [status, answer] of Object.entries(response)) {
    if (!isObject(answer)) continue;
    answer.description ??= STATUS_TEXT[status] ?? `HTTP ${status}`;
    if (isObject(answer.content)) {
      for (const media of Object.values(answer.content)) if (isObject(media)) exact(media.schema);
    } else {
      exact(answer);
    }
  }
  copy.response = response;
  return copy;
}
