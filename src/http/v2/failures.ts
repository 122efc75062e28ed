import type { FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import { DomainError, type ErrorCode, Invalid, ParamMissing, Taken } from '../../domain/errors.ts';

/**
 * How V2 endpoints answer failures their own way. The shared map (`V2_STATUS` in http/errors.ts)
 * answers every failure with an empty body and V2's status; api.md's V2 tables then give some
 * endpoints a status of their own ("400 on failure", "404 on failure", 403 for a second document)
 * and `add_student` a body. Those rules live here and in the routes that name them, nowhere else.
 */

/**
 * What a service call can report about the request itself: the failures api.md's V2 tables mean by
 * "on failure" or "the save fails". Left out on purpose: authentication and role refusals (api.md:
 * always 403) and transport failures (unreadable body, upload too large, unavailable), which every
 * V2 endpoint answers alike through the shared map.
 */
export const SAVE_FAILURES: readonly ErrorCode[] = [
  'not_found',
  'not_found_message',
  'param_missing',
  'taken',
  'invalid',
  'dependent_exists',
  'state_conflict',
  'unsupported_media_type',
];

/** The save failures except "no such record", for endpoints whose table names only bad input. */
export const INPUT_FAILURES: readonly ErrorCode[] = SAVE_FAILURES.filter(
  (code) => code !== 'not_found' && code !== 'not_found_message',
);

/** One endpoint rule: these codes answer this status, with an empty body unless `body` is given. */
export interface FailureRule {
  readonly codes: readonly ErrorCode[];
  readonly status: number;
  readonly body?: (error: DomainError) => Record<string, unknown>;
}

/** A rule answering `codes` with `status` and an empty body. */
export function answer(status: number, codes: readonly ErrorCode[]): FailureRule {
  return { status, codes };
}

/**
 * The Rails-style `{"errors": {FIELD: [MESSAGE]}}` of a failed save (the body V2 `add_student`
 * answers): a missing field "can't be blank", a taken one "has already been taken", an invalid one
 * its detail. Returns `{"errors": {}}` for a failure that names no field.
 */
export function railsErrors(error: DomainError): Record<string, unknown> {
  if (error instanceof ParamMissing) return { errors: { [error.field]: ["can't be blank"] } };
  if (error instanceof Taken) return { errors: { [error.field]: ['has already been taken'] } };
  if (error instanceof Invalid) return { errors: { [error.field]: [error.detail] } };
  return { errors: {} };
}

type Handler<Route extends RouteGenericInterface> = (
  request: FastifyRequest<Route>,
  reply: FastifyReply,
) => Promise<unknown>;

/**
 * Wraps a V2 handler so that a domain error matching one of `rules` (the first that matches wins)
 * is answered as that rule says. Returns the wrapped handler; any other error propagates to the
 * server's error handler, which answers through the shared V2 map.
 */
export function withFailures<Route extends RouteGenericInterface>(
  rules: readonly FailureRule[],
  handler: Handler<Route>,
): Handler<Route> {
  return async (request, reply) => {
    try {
      return await handler(request, reply);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const rule = rules.find((candidate) => candidate.codes.includes(error.code));
      if (rule === undefined) throw error;
      reply.code(rule.status);
      if (rule.body === undefined) return reply.send();
      return reply.type('application/json; charset=utf-8').send(rule.body(error));
    }
  };
}
