import type { FastifyError } from 'fastify';
import {
  type DomainError,
  type ErrorCode,
  Invalid,
  MalformedBody,
  PayloadTooLarge,
  Taken,
  UnsupportedMediaType,
} from '../domain/errors.ts';
import { MalformedJson } from './request-params.ts';

export const NOT_AUTHORIZED = 'You are not authorized to access this page.';
export const NOT_ACCEPTABLE = 'Not Acceptable: send Accept: application/vnd.procwise.v3';

/** An HTTP answer to an error: status and body (null for V2's empty bodies). */
export interface ErrorAnswer {
  readonly status: number;
  readonly body: Record<string, unknown> | null;
}

/** V3: the status of each code. Messages come from the error itself unless fixed below. */
export const V3_STATUS: Readonly<Record<ErrorCode, number>> = {
  unauthorized: 403,
  forbidden: 403,
  not_found: 404,
  not_found_message: 404,
  param_missing: 422,
  taken: 422,
  invalid: 422,
  dependent_exists: 422,
  state_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  malformed_body: 400,
  not_acceptable: 406,
  route_not_found: 404,
  unavailable: 503,
  rate_limited: 429,
  data_key_unavailable: 500,
};

/** V2 answers failures with empty bodies and its own statuses (400 where V3 says 422). */
export const V2_STATUS: Readonly<Record<ErrorCode, number>> = {
  ...V3_STATUS,
  param_missing: 400,
  taken: 400,
  invalid: 400,
  dependent_exists: 400,
};

const FIXED_MESSAGES: Partial<Record<ErrorCode, string>> = {
  unauthorized: NOT_AUTHORIZED,
  forbidden: NOT_AUTHORIZED,
  not_acceptable: NOT_ACCEPTABLE,
  route_not_found: 'Not Found',
  unavailable: 'Service unavailable',
  data_key_unavailable: 'Stored data cannot be decrypted with this server key',
};

/** The V3 answer to a domain error: `{"error": MESSAGE}`, plus `errors` for one invalid field. */
export function v3Answer(error: DomainError): ErrorAnswer {
  const body: Record<string, unknown> = { error: FIXED_MESSAGES[error.code] ?? error.message };
  if (error instanceof Invalid) body.errors = { [error.field]: [error.detail] };
  if (error instanceof Taken) body.errors = { [error.field]: ['has already been taken'] };
  return { status: V3_STATUS[error.code], body };
}

/** The V2 answer: empty bodies, except authentication failures, which answer as V3 does. */
export function v2Answer(error: DomainError): ErrorAnswer {
  if (error.code === 'unauthorized') return { status: 403, body: { error: NOT_AUTHORIZED } };
  return { status: V2_STATUS[error.code], body: null };
}

/**
 * Translates what Fastify or a body parser threw into a domain error, so one map answers everything.
 * Returns undefined for an unexpected error (a bug: 500 with a generic body, details only in the log).
 */
export function domainErrorFromFramework(error: unknown): DomainError | undefined {
  // The parser's own message can quote the body back; the answer stays generic (the log has the detail).
  if (error instanceof MalformedJson) return new MalformedBody('Malformed JSON body');
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaType('Unsupported Media Type');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
      return new PayloadTooLarge('Payload Too Large');
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new PayloadTooLarge('Payload Too Large');
    if (status === 415) return new UnsupportedMediaType('Unsupported Media Type');
    return new MalformedBody('Bad Request');
  }
  return undefined;
}
