import type { FastifyReply, FastifyRequest } from 'fastify';
import { ParamMissing } from '../../domain/errors.ts';
import { param, type Params } from '../../domain/input.ts';
import {
  type ClientInfo,
  SignInThrottled,
  type StaffSession,
} from '../../domain/staff-auth/staff-auth.service.ts';
import { isoTime } from '../time.ts';

/*
 * What the staff routes (sign-in, second factor, account, OpenID Connect) share in reading a request
 * and writing an answer. A module of its own so those route files depend on it and not on each other.
 */

/** A text field of the body; anything else (absent, a number, an object) counts as missing. */
export function text(params: Params, name: string): string {
  const value = param(params, name);
  if (typeof value !== 'string' || value === '') throw new ParamMissing(name);
  return value;
}

/** Where a request comes from: its address and User-Agent. Returns them. */
export function clientOf(request: FastifyRequest): ClientInfo {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof agent === 'string' ? agent : null };
}

/** The JSON of a session: who is signed in, the CSRF token, when the session ends. */
export function presentSession(session: StaffSession) {
  return {
    user: {
      id: session.actor.id,
      institute_id: session.actor.instituteId,
      email: session.email,
      name: session.name,
      role: session.actor.role,
      language: session.language,
    },
    csrf_token: session.csrfToken,
    idle_expires_at: isoTime(session.idleExpiresAt),
    expires_at: isoTime(session.expiresAt),
    second_factor_enabled: session.secondFactor,
    second_factor_enrolment_required: session.enrolmentOnly,
  };
}

/** Runs a throttled sign-in, putting Retry-After on the 429. Returns what `run` returns. */
export async function throttled<T>(reply: FastifyReply, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof SignInThrottled) reply.header('retry-after', String(error.retryAfterSeconds));
    throw error;
  }
}
