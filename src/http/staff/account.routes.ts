import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/access.ts';
import { Invalid, Unauthorized } from '../../domain/errors.ts';
import type { StaffSession } from '../../domain/staff-auth/staff-auth.service.ts';
import type { Services } from '../../services.ts';
import { recordSignInEvent } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import {
  apiCredentialsSchema,
  changePasswordSchema,
  languageSchema,
  revealSecretKeySchema,
  rotateCredentialsSchema,
} from './account.schemas.ts';
import { requireSession } from './session-cookie.ts';
import { clientOf, text, throttled } from './staff-requests.ts';

/**
 * The live, full session of the request's cookie (with the CSRF token on a change). A session
 * limited to enrolling a second factor is refused like none: its user has not yet shown what the
 * institute asks for, so it reaches neither the password nor the API credentials. Returns the
 * session and its cookie token; throws Unauthorized (403).
 */
async function requireFullSession(
  services: Services,
  request: FastifyRequest,
): Promise<{ session: StaffSession; token: string }> {
  const found = await requireSession(services, request);
  if (found.session.enrolmentOnly) {
    throw new Unauthorized(`user ${found.session.actor.id} must enrol a second factor first`);
  }
  return found;
}

/**
 * Runs a change that asks for the password (or, for new recovery codes, a TOTP code) again, under the
 * throttle, recording a wrong one (Invalid on one of `fields`) in the audit log as
 * `password_confirmation_failed` (422) with the user, never with what was typed, before rethrowing
 * it; a throttled attempt (429) is not recorded, as at sign-in. Returns what `run` returns.
 */
export async function confirming<T>(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  actor: Actor,
  run: () => Promise<T>,
  fields: readonly string[] = ['password', 'current_password'],
): Promise<T> {
  try {
    return await throttled(reply, run);
  } catch (error) {
    if (error instanceof Invalid && fields.includes(error.field)) {
      await recordSignInEvent(services, request, {
        action: 'password_confirmation_failed',
        actor,
        status: 422,
      });
    }
    throw error;
  }
}

/**
 * "My account" for a signed-in user (docs/staff-sign-in.md, "My account"): changing the password and
 * reaching its own API credentials, with the session cookie (and X-CSRF-Token on changes). Every
 * change asks for the password again. Errors answer in V3's shape.
 */
export function registerAccountRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services } = deps;
  const { account } = services;

  app.put('/auth/language', { schema: languageSchema }, async (request) => {
    // Also for a session that may only enrol a second factor: it reads its page in its language too.
    const { session } = await requireSession(services, request);
    return { language: await account.setLanguage(session.actor, request.input.values) };
  });

  app.post('/auth/password/change', { schema: changePasswordSchema }, async (request, reply) => {
    const { session, token } = await requireFullSession(services, request);
    const values = request.input.values;
    const passwords = { current: text(values, 'current_password'), next: text(values, 'new_password') };
    await confirming(services, request, reply, session.actor, () =>
      account.changePassword(session.actor, token, passwords, clientOf(request)),
    );
    await recordSignInEvent(services, request, {
      action: 'password_changed',
      actor: session.actor,
      status: 204,
    });
    return reply.code(204).send();
  });

  app.get('/auth/api_credentials', { schema: apiCredentialsSchema }, async (request, reply) => {
    const { session } = await requireFullSession(services, request);
    const { secretKeyRevealable } = await account.credentials(session.actor);
    reply.header('cache-control', 'no-store');
    return reply.send({ api_token: null, secret_key_revealable: secretKeyRevealable });
  });

  app.post('/auth/api_credentials/reveal', { schema: revealSecretKeySchema }, async (request, reply) => {
    const { session } = await requireFullSession(services, request);
    const password = text(request.input.values, 'password');
    const secretKey = await confirming(services, request, reply, session.actor, () =>
      account.revealSecretKey(session.actor, password, clientOf(request)),
    );
    await recordSignInEvent(services, request, {
      action: 'api_secret_revealed',
      actor: session.actor,
      status: 200,
    });
    reply.header('cache-control', 'no-store');
    return reply.send({ secret_key: secretKey });
  });

  app.post('/auth/api_credentials/rotate', { schema: rotateCredentialsSchema }, async (request, reply) => {
    const { session } = await requireFullSession(services, request);
    const password = text(request.input.values, 'password');
    const credentials = await confirming(services, request, reply, session.actor, () =>
      account.rotateCredentials(session.actor, password, clientOf(request)),
    );
    await recordSignInEvent(services, request, {
      action: 'api_credentials_rotated',
      actor: session.actor,
      status: 200,
    });
    reply.header('cache-control', 'no-store');
    return reply.send({ api_token: credentials.apiToken, secret_key: credentials.secretKey });
  });
}
