import type { FastifyInstance } from 'fastify';
import { param, type Params } from '../../domain/input.ts';
import { recordingRefusal, recordSignInEvent } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { clientOf, presentSession, text, throttled } from './staff-requests.ts';
import { registerOidcRoutes } from './oidc.routes.ts';
import { registerSecondFactorRoutes } from './second-factor.routes.ts';
import {
  isSecureOrigin,
  requireSameSiteJson,
  requireSession,
  sessionCookie,
  sessionTokenFrom,
} from './session-cookie.ts';
import {
  acceptInvitationSchema,
  compatSignInSchema,
  forgotPasswordSchema,
  resetPasswordSchema,
  sessionSchema,
  signInSchema,
  signOutEverywhereSchema,
  signOutSchema,
} from './sign-in.schemas.ts';

/** The answer of forgot-password, the same whatever the email names. */
export const RESET_REQUESTED =
  'If this email belongs to an active account, a link to choose a new password is on its way.';

/** The JSON of a sign-in that waits for its second step. */
function presentPending(pending: { token: string; expiresAt: number }) {
  return {
    second_factor_required: true,
    pending_token: pending.token,
    expires_at: isoTime(pending.expiresAt),
  };
}

/**
 * Staff sign-in over JSON (docs/staff-sign-in.md): `/auth/*` for the console, and the compat
 * `POST /users/sign_in.json` of the original service's Go client. Errors answer in V3's shape.
 */
export function registerStaffSignInRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const { staffAuth } = services;
  const secure = isSecureOrigin(config.publicUrl);
  registerSecondFactorRoutes(app, deps);
  registerOidcRoutes(app, deps);

  app.post('/auth/sign_in', { schema: signInSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    const values = request.input.values;
    const email = text(values, 'email');
    const password = text(values, 'password');
    const result = await throttled(reply, () =>
      recordingRefusal(services, request, email, () => staffAuth.signIn(email, password, clientOf(request))),
    );
    reply.header('cache-control', 'no-store');
    // A user with a second factor gets no cookie yet (docs/staff-sign-in.md, "Second factor").
    if (result.pending !== undefined) return reply.code(202).send(presentPending(result.pending));
    const { token, session } = result;
    await recordSignInEvent(services, request, { action: 'sign_in', actor: session.actor, status: 200 });
    reply.header('set-cookie', sessionCookie(token, secure));
    reply.header('cache-control', 'no-store');
    return reply.send(presentSession(session));
  });

  app.get('/auth/session', { schema: sessionSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    const instituteName = await services.institutes.ownName(session.actor);
    reply.header('cache-control', 'no-store');
    return reply.send({ ...presentSession(session), institute_name: instituteName });
  });

  app.post('/auth/sign_out', { schema: signOutSchema }, async (request, reply) => {
    const token = sessionTokenFrom(request.headers);
    if (token !== undefined && (await staffAuth.session(token)) !== undefined) {
      // A live session is ended only with its CSRF token: another site must not sign people out.
      const { session } = await requireSession(services, request);
      await staffAuth.signOut(token);
      await recordSignInEvent(services, request, { action: 'sign_out', actor: session.actor, status: 204 });
    }
    reply.header('set-cookie', sessionCookie(undefined, secure));
    return reply.code(204).send();
  });

  app.post('/auth/sign_out_everywhere', { schema: signOutEverywhereSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    await staffAuth.signOutEverywhere(session.actor.id);
    await recordSignInEvent(services, request, {
      action: 'sign_out_everywhere',
      actor: session.actor,
      status: 204,
    });
    reply.header('set-cookie', sessionCookie(undefined, secure));
    return reply.code(204).send();
  });

  app.post('/auth/password/forgot', { schema: forgotPasswordSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    await staffAuth.requestPasswordReset(text(request.input.values, 'email'));
    return reply.code(202).send({ message: RESET_REQUESTED });
  });

  app.post('/auth/password/reset', { schema: resetPasswordSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    const values = request.input.values;
    const actor = await staffAuth.redeem('password_reset', text(values, 'token'), text(values, 'password'));
    await recordSignInEvent(services, request, { action: 'password_changed', actor, status: 204 });
    return reply.code(204).send();
  });

  app.post('/auth/invitations/accept', { schema: acceptInvitationSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    const values = request.input.values;
    const actor = await staffAuth.redeem('invitation', text(values, 'token'), text(values, 'password'));
    await recordSignInEvent(services, request, { action: 'password_changed', actor, status: 204 });
    return reply.code(204).send();
  });

  // The original service's Go client signs in here for API credentials (docs/staff-sign-in.md).
  app.post('/users/sign_in.json', { schema: compatSignInSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    const user = param(request.input.values, 'user');
    const fields: Params = typeof user === 'object' && user !== null ? (user as Params) : {};
    const email = text(fields, 'email');
    const password = text(fields, 'password');
    const signedIn = await throttled(reply, () =>
      recordingRefusal(services, request, email, () =>
        staffAuth.signInForCredentials(email, password, clientOf(request)),
      ),
    );
    const { user: who } = signedIn;
    await recordSignInEvent(services, request, {
      action: 'api_credentials_issued',
      actor: { id: who.id, instituteId: who.instituteId, role: who.role },
      status: 200,
    });
    reply.header('cache-control', 'no-store');
    return reply.send({
      id: signedIn.user.id,
      email: signedIn.user.email,
      api_token: signedIn.credentials.apiToken,
      secret_key: signedIn.credentials.secretKey,
    });
  });
}
