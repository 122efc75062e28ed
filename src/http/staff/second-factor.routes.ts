import type { FastifyInstance } from 'fastify';
import { SecondStepRefused } from '../../domain/staff-auth/staff-auth.service.ts';
import { otpauthUri } from '../../security/totp.ts';
import { recordSignInEvent } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { confirming } from './account.routes.ts';
import {
  confirmSecondFactorSchema,
  disableSecondFactorSchema,
  recoveryCodesSchema,
  secondStepSchema,
  startSecondFactorSchema,
} from './second-factor.schemas.ts';
import { isSecureOrigin, requireSameSiteJson, requireSession, sessionCookie } from './session-cookie.ts';
import { clientOf, presentSession, text, throttled } from './staff-requests.ts';

/**
 * The second factor (docs/staff-sign-in.md, "Second factor"): the second step of a sign-in, and
 * enrolment for a signed-in user (cookie and CSRF token). Errors answer in V3's shape.
 */
export function registerSecondFactorRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const { staffAuth } = services;
  const secure = isSecureOrigin(config.publicUrl);

  app.post('/auth/sign_in/second_factor', { schema: secondStepSchema }, async (request, reply) => {
    requireSameSiteJson(request, config.publicUrl);
    const values = request.input.values;
    const pendingToken = text(values, 'pending_token');
    const code = text(values, 'code');
    const { token, session } = await throttled(reply, async () => {
      try {
        return await staffAuth.completeSignIn(pendingToken, code, clientOf(request));
      } catch (error) {
        // A wrong code is a refused sign-in of a known account (the code itself is never kept). An
        // unknown or expired pending token names nobody and is not recorded.
        if (error instanceof SecondStepRefused) {
          await recordSignInEvent(services, request, {
            action: 'sign_in_failed',
            actor: error.actor,
            email: error.email,
            status: 403,
          });
        }
        throw error;
      }
    });
    await recordSignInEvent(services, request, { action: 'sign_in', actor: session.actor, status: 200 });
    reply.header('set-cookie', sessionCookie(token, secure));
    reply.header('cache-control', 'no-store');
    return reply.send(presentSession(session));
  });

  app.post('/auth/second_factor/start', { schema: startSecondFactorSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    const secret = await staffAuth.startSecondFactor(session.actor.id);
    reply.header('cache-control', 'no-store');
    return reply.send({ secret, otpauth_uri: otpauthUri(session.email, secret) });
  });

  app.post('/auth/second_factor/confirm', { schema: confirmSecondFactorSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    const codes = await staffAuth.confirmSecondFactor(session.actor.id, text(request.input.values, 'code'));
    await recordSignInEvent(services, request, {
      action: 'second_factor_enabled',
      actor: session.actor,
      status: 200,
    });
    reply.header('cache-control', 'no-store');
    return reply.send({ recovery_codes: codes });
  });

  app.post('/auth/second_factor/disable', { schema: disableSecondFactorSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    const password = text(request.input.values, 'password');
    await confirming(
      services,
      request,
      reply,
      session.actor,
      () => staffAuth.disableSecondFactor(session.actor.id, password, clientOf(request)),
      ['password'],
    );
    await recordSignInEvent(services, request, {
      action: 'second_factor_disabled',
      actor: session.actor,
      status: 204,
    });
    return reply.code(204).send();
  });

  app.post('/auth/second_factor/recovery_codes', { schema: recoveryCodesSchema }, async (request, reply) => {
    const { session } = await requireSession(services, request);
    const code = text(request.input.values, 'code');
    const codes = await confirming(
      services,
      request,
      reply,
      session.actor,
      () => staffAuth.regenerateRecoveryCodes(session.actor.id, code, clientOf(request)),
      ['code'],
    );
    await recordSignInEvent(services, request, {
      action: 'recovery_codes_regenerated',
      actor: session.actor,
      status: 200,
    });
    reply.header('cache-control', 'no-store');
    return reply.send({ recovery_codes: codes });
  });
}
