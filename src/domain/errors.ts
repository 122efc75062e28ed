/**
 * The closed set of domain error codes. Every one is mapped to a status and a message, per API
 * version, in http/errors.ts and listed in docs/errors.md; a test keeps the three in step.
 */
export const ERROR_CODES = [
  'unauthorized',
  'forbidden',
  'not_found',
  'not_found_message',
  'param_missing',
  'taken',
  'invalid',
  'dependent_exists',
  'state_conflict',
  'payload_too_large',
  'unsupported_media_type',
  'malformed_body',
  'not_acceptable',
  'route_not_found',
  'unavailable',
  'rate_limited',
  'data_key_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Base of every error a service may throw on purpose; anything else is a bug and answers 500. */
export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
}

/** The caller could not be authenticated (any signature or token failure). Never says which check failed. */
export class Unauthorized extends DomainError {
  readonly code = 'unauthorized';
  readonly reason: string;
  constructor(reason: string) {
    super(`not authorized: ${reason}`);
    this.reason = reason;
  }
}

/** The caller may see the record but its role may not do this. */
export class Forbidden extends DomainError {
  readonly code = 'forbidden';
  constructor(reason = 'role does not allow this action') {
    super(reason);
  }
}

/** Model names as they appear in `Couldn't find MODEL with 'id'=ID`. */
export type ModelName =
  | 'Exam'
  | 'Document'
  | 'Attachment'
  | 'Student Session'
  | 'Institute'
  | 'User'
  | 'Lti Resource'
  | 'Tool Provider'
  | 'Incident';

/** A record that does not exist or lies outside the caller's scope (the two answer alike). */
export class NotFound extends DomainError {
  readonly code = 'not_found';
  constructor(model: ModelName, id: string | number) {
    super(`Couldn't find ${model} with 'id'=${id}`);
  }
}

/** A not-found whose message the contract spells out in full (zip download, LTI student). */
export class NotFoundMessage extends DomainError {
  readonly code = 'not_found_message';
}

/** A required parameter is absent or empty. */
export class ParamMissing extends DomainError {
  readonly code = 'param_missing';
  readonly field: string;
  constructor(field: string) {
    super(`Param is missing or the value is empty: '${field}'`);
    this.field = field;
  }
}

/** A uniqueness rule was broken on `field`. */
export class Taken extends DomainError {
  readonly code = 'taken';
  readonly field: string;
  constructor(field: string) {
    super(`'${field}':['has already been taken']`);
    this.field = field;
  }
}

/** Any other validation failure of one field. */
export class Invalid extends DomainError {
  readonly code = 'invalid';
  readonly field: string;
  readonly detail: string;
  constructor(field: string, detail: string) {
    super(`'${field}':['${detail}']`);
    this.field = field;
    this.detail = detail;
  }
}

/** A record cannot be removed while others depend on it; the message is the whole answer. */
export class DependentExists extends DomainError {
  readonly code = 'dependent_exists';
}

/**
 * A request that does not fit the session's state, with a sentence of its own (the candidate room:
 * a finished session, a recording chunk out of order, a start before the room opens).
 */
export class StateConflictMessage extends DomainError {
  readonly code = 'state_conflict';
}

/** A status move the state machine forbids. */
export class StateConflict extends DomainError {
  readonly code = 'state_conflict';
  constructor(from: string, to: string) {
    super(`Cannot move a student session from ${from} to ${to}`);
  }
}

export class PayloadTooLarge extends DomainError {
  readonly code = 'payload_too_large';
}

export class UnsupportedMediaType extends DomainError {
  readonly code = 'unsupported_media_type';
}

/** The request body could not be read (malformed JSON, a broken multipart stream). */
export class MalformedBody extends DomainError {
  readonly code = 'malformed_body';
}

/** A V3 request whose Accept header names no V3 media type. */
export class NotAcceptable extends DomainError {
  readonly code = 'not_acceptable';
}

/** A path no route serves. */
export class RouteNotFound extends DomainError {
  readonly code = 'route_not_found';
}

/**
 * The service cannot do its work right now and the same request will succeed later: the database is
 * unreachable, restarting or refusing connections (db/unavailable.ts says which failures count).
 * Answered 503 with `Retry-After`.
 */
export class ServiceUnavailable extends DomainError {
  readonly code = 'unavailable';
  constructor() {
    super('Service unavailable');
  }
}

/** Too many requests from one caller in the window (the candidate room's rate limit). */
export class RateLimited extends DomainError {
  readonly code = 'rate_limited';
}

/**
 * Stored data cannot be decrypted: the institute's data key is missing, or it does not open with this
 * server's key (INVIGIL_SECRET or DATA_DIR/server.key changed without `invigil keys rewrap`). The
 * service fails closed: it never hands out the stored bytes. Answered 500 with a fixed message; the
 * log names the institute and key version.
 */
export class DataKeyUnavailable extends DomainError {
  readonly code = 'data_key_unavailable';
  readonly instituteId: number;
  readonly version: number;
  constructor(instituteId: number, version: number, reason: string) {
    super(`data key ${version} of institute ${instituteId} is unavailable: ${reason}`);
    this.instituteId = instituteId;
    this.version = version;
  }
}
