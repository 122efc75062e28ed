import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  OIDC_LOGIN_MS,
  type OidcFailureCode,
  OidcSignInFailed,
  SIGN_IN_PAGE,
} from '../../domain/staff-auth/oidc-sign-in.ts';
import { recordSignInEvent } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { listSignInProvidersSchema, oidcCallbackSchema, startOidcSchema } from './oidc.schemas.ts';
import { cookieValue, isSecureOrigin, sessionCookie } from './session-cookie.ts';
import { clientOf } from './staff-requests.ts';

/** The cookie binding a pending OIDC login to the browser that started it. */
export const OIDC_COOKIE = 'invigil_oidc';

/**
 * The `Set-Cookie` value of the browser binding: sent only to `/auth/oidc` (the callback), gone when
 * no pending login could still use it, and SameSite=Lax so the provider's redirect back (a top-level
 * GET from another site) carries it.
 */
function bindingCookie(value: string, secure: boolean): string {
  const parts = [
    `${OIDC_COOKIE}=${value}`,
    'Path=/auth/oidc',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${OIDC_LOGIN_MS / 1000}`,
    ...(secure ? ['Secure'] : []),
  ];
  return parts.join('; ');
}

/** The raw query string of the request (byte for byte), without the `?`. */
function rawQuery(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at === -1 ? '' : request.url.slice(at + 1);
}

/**
 * The status a failed OIDC sign-in is recorded with in the audit log (the answer itself is always a
 * 302): 403 for a refusal, as a refused password sign-in; 502 when the provider could not be
 * reached; 503 when Invigil itself failed. Returns it.
 */
export function auditStatusOf(code: OidcFailureCode): number {
  if (code === 'provider_unavailable') return 502;
  if (code === 'unavailable') return 503;
  return 403;
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  // The callback's address holds a code and a state; neither the answer nor its address is kept.
  reply.header('cache-control', 'no-store');
  reply.header('referrer-policy', 'no-referrer');
  return reply.redirect(location, 302);
}

/**
 * OpenID Connect staff sign-in (docs/staff-sign-in.md, "OpenID Connect"): the public list of
 * providers, the start that redirects to a provider, and the callback it redirects back to. The
 * two redirecting routes never answer an error: every failure is a 302 to the console's sign-in
 * page with `?error=<code>` (OIDC_FAILURES), recorded in the audit log as a failed sign-in
 * (auditStatusOf), except a throttled attempt, which checked nothing (as a 429 at sign-in).
 */
export function registerOidcRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const { oidcSignIn } = services;
  const { publicUrl } = config;
  const secure = isSecureOrigin(publicUrl);

  /** Logs and records a failed sign-in, then sends the browser to the sign-in page with its code. */
  async function refuse(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<FastifyReply> {
    const failure = error instanceof OidcSignInFailed ? error : undefined;
    const code: OidcFailureCode = failure?.code ?? 'unavailable';
    const detail = { code, reason: failure?.reason, provider: failure?.providerId };
    if (failure === undefined) request.log.error({ err: error }, 'OIDC sign-in failed');
    // A blocked address may send many: info, so they do not flood the warnings.
    else if (code === 'throttled') request.log.info(detail, 'OIDC sign-in throttled');
    else request.log.warn(detail, 'OIDC sign-in refused');
    // Recording each throttled attempt would let anyone fill the log at no cost (docs/audit-log.md).
    if (code !== 'throttled') {
      await recordSignInEvent(services, request, {
        action: 'sign_in_failed',
        email: failure?.email,
        target:
          failure?.providerId === undefined
            ? undefined
            : { type: 'identity_providers', id: failure.providerId },
        status: auditStatusOf(code),
      });
    }
    return redirect(reply, `${publicUrl}${SIGN_IN_PAGE}?error=${code}`);
  }

  app.get('/auth/identity_providers', { schema: listSignInProvidersSchema }, async (_request, reply) => {
    const providers = await oidcSignIn.providers();
    reply.header('cache-control', 'no-store');
    return reply.send({
      identity_providers: providers.map((provider) => ({
        id: provider.id,
        name: provider.name,
        institute_id: provider.instituteId,
        institute_name: provider.instituteName,
      })),
    });
  });

  app.get('/auth/oidc/:id/start', { schema: startOidcSchema }, async (request, reply) => {
    try {
      const { id } = request.params as { id: string };
      const started = await oidcSignIn.start(
        id,
        request.input.values.return_to,
        cookieValue(request.headers, OIDC_COOKIE),
        clientOf(request),
      );
      reply.header('set-cookie', bindingCookie(started.browserKey, secure));
      return redirect(reply, started.authorizationUrl);
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  app.get('/auth/oidc/callback', { schema: oidcCallbackSchema }, async (request, reply) => {
    try {
      const result = await oidcSignIn.finish(
        rawQuery(request),
        cookieValue(request.headers, OIDC_COOKIE),
        clientOf(request),
      );
      // A user with a second factor gives a code first, as after a password (docs/staff-sign-in.md).
      // The pending token travels in the fragment, which no server and no Referer ever sees.
      if (result.pending !== undefined) {
        const fragment = new URLSearchParams({
          pending_token: result.pending.token,
          expires_at: new Date(result.pending.expiresAt).toISOString(),
          return_to: result.returnTo,
        });
        return redirect(reply, `${publicUrl}${SIGN_IN_PAGE}#${fragment.toString()}`);
      }
      await recordSignInEvent(services, request, {
        action: 'sign_in',
        actor: result.session.actor,
        target: { type: 'identity_providers', id: result.providerId },
        status: 302,
      });
      reply.header('set-cookie', sessionCookie(result.token, secure));
      return redirect(reply, `${publicUrl}${result.returnTo}`);
    } catch (error) {
      return refuse(request, reply, error);
    }
  });
}
