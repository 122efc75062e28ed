import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/access.ts';
import { Unauthorized, UnsupportedMediaType } from '../../domain/errors.ts';
import type { StaffSession } from '../../domain/staff-auth/staff-auth.service.ts';
import type { Services } from '../../services.ts';

/**
 * The staff session cookie and the checks around it (docs/staff-sign-in.md): the cookie carries a
 * random token whose hash names a `staff_sessions` row; a request that changes anything also carries
 * the session's CSRF token in `X-CSRF-Token`, which a cross-site page cannot read or send.
 */

export const SESSION_COOKIE = 'invigil_session';
export const CSRF_HEADER = 'x-csrf-token';

/** The value of cookie `name` in a `Cookie` header, or undefined when it is absent or empty. */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const pair of (headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at === -1 || pair.slice(0, at).trim() !== name) continue;
    const value = pair.slice(at + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** The session token of the request's `Cookie` header, or undefined when it has none. */
export function sessionTokenFrom(headers: IncomingHttpHeaders): string | undefined {
  return cookieValue(headers, SESSION_COOKIE);
}

/** True when the service is reached over https, so cookies must say `Secure`. */
export function isSecureOrigin(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

/**
 * The `Set-Cookie` value that stores `token` (or, with undefined, removes the cookie). A browser
 * session cookie: it has no Max-Age, and the server ends the session on its own limits anyway.
 */
export function sessionCookie(token: string | undefined, secure: boolean): string {
  const parts = [
    `${SESSION_COOKIE}=${token ?? ''}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    ...(token === undefined ? ['Max-Age=0'] : []),
    ...(secure ? ['Secure'] : []),
  ];
  return parts.join('; ');
}

/** True when the request's `X-CSRF-Token` equals the session's (compared in constant time). */
export function csrfMatches(session: StaffSession, headers: IncomingHttpHeaders): boolean {
  const sent = headers[CSRF_HEADER];
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Reads (safe) methods need no CSRF token; everything else does. */
export function changesState(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/**
 * The live session of the request's cookie, refusing a state-changing request without the
 * session's CSRF header. Returns the session and its token; throws Unauthorized (403) otherwise.
 */
export async function requireSession(
  services: Services,
  request: FastifyRequest,
): Promise<{ session: StaffSession; token: string }> {
  const token = sessionTokenFrom(request.headers);
  if (token === undefined) throw new Unauthorized('no staff session cookie');
  const session = await services.staffAuth.session(token);
  if (session === undefined) throw new Unauthorized('unknown, ended or expired staff session');
  if (changesState(request.method) && !csrfMatches(session, request.headers)) {
    throw new Unauthorized(`missing or wrong CSRF token for user ${session.actor.id}`);
  }
  return { session, token };
}

/**
 * How an `/api/v3` request is authenticated by cookie: only when it has no Authorization header (a
 * signed request is always judged by its signature) and carries the session cookie. Returns the
 * actor, undefined when the request does not use the cookie; throws Unauthorized as requireSession,
 * and for a session limited to enrolling a second factor.
 */
export async function cookieActor(services: Services, request: FastifyRequest): Promise<Actor | undefined> {
  if (request.headers.authorization !== undefined) return undefined;
  if (sessionTokenFrom(request.headers) === undefined) return undefined;
  const { session } = await requireSession(services, request);
  // An administrator who must enrol a second factor may do only that (docs/staff-sign-in.md).
  if (session.enrolmentOnly) {
    throw new Unauthorized(`user ${session.actor.id} must enrol a second factor first`);
  }
  return session.actor;
}

/**
 * Login CSRF: the sign-in family accepts only JSON bodies (a cross-site HTML form cannot send one
 * without a CORS preflight, which this service never grants) and, when the browser names the page's
 * origin, only PUBLIC_URL's own. Throws UnsupportedMediaType (415) or Unauthorized (403).
 */
export function requireSameSiteJson(request: FastifyRequest, publicUrl: string): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== 'application/json') throw new UnsupportedMediaType('Send the body as application/json');
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(publicUrl).origin) {
    throw new Unauthorized(`cross-origin sign-in request from ${origin.slice(0, 100)}`);
  }
  if (request.headers['sec-fetch-site'] === 'cross-site')
    throw new Unauthorized('cross-site sign-in request');
}
