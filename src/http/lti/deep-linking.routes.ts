import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import type { StaffSession } from '../../domain/staff-auth/staff-auth.service.ts';
import {
  buildDeepLinkingResponse,
  DEEP_LINK_PURPOSE,
  DeepLinkRefused,
  parseDeepLinkTicketPayload,
} from '../../lti/deep-linking.ts';
import { consumeTicket } from '../../domain/lti/tickets.ts';
import { hashToken } from '../../security/keys.ts';
import type { RouteDeps } from '../route-deps.ts';
import { sessionTokenFrom } from '../staff/session-cookie.ts';
import { autoSubmitPage, messagePage, pageTranslator, refusalText, sendPage } from './pages.ts';

/** The form field that carries the session's CSRF token (a form cannot send the header). */
export const CSRF_FIELD = 'csrf_token';

/** True when `sent` equals the session's CSRF token (compared in constant time). */
function csrfFieldMatches(session: StaffSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The first value of a form field, or undefined. */
function field(request: FastifyRequest, name: string): string | undefined {
  const value = request.input.values[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/**
 * LTI Deep Linking routes (docs/lti.md, "Deep linking"): `POST /lti/deep-link` takes the console's
 * form (ticket, exam_id, csrf_token) from the signed-in teacher the deep-linking launch signed in,
 * uses the ticket once, and answers a page posting the signed `LtiDeepLinkingResponse` (form field
 * `JWT`) to the platform's return URL. Every refusal is a clear page with its status and one log line.
 */
export function registerLtiDeepLinkingRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const { db } = deps.database;
  const publicOrigin = new URL(config.publicUrl).origin;

  app.post('/lti/deep-link', { schema: { hide: true } }, async (request, reply) => {
    // A teacher in the console: the browser's languages.
    const t = pageTranslator(request);
    const refuse = (status: number, code: string, title: string, message: string) => {
      request.log.warn({ code }, 'lti deep link refused');
      return sendPage(reply, messagePage(title, message, { status, t }));
    };
    // The form comes from the console only: a page elsewhere cannot send it on the user's behalf.
    const origin = request.headers.origin;
    if (
      (origin !== undefined && origin !== publicOrigin) ||
      request.headers['sec-fetch-site'] === 'cross-site'
    ) {
      return refuse(
        403,
        'cross_site',
        t.t('server.lti.deepLink.notAllowed'),
        t.t('server.lti.deepLink.crossSite'),
      );
    }
    const token = sessionTokenFrom(request.headers);
    const session = token === undefined ? undefined : await services.staffAuth.session(token);
    if (session === undefined || session.enrolmentOnly) {
      return refuse(
        401,
        'no_session',
        t.t('server.lti.deepLink.signInAgain'),
        t.t('server.lti.deepLink.sessionEnded'),
      );
    }
    if (!csrfFieldMatches(session, field(request, CSRF_FIELD))) {
      return refuse(403, 'csrf', t.t('server.lti.deepLink.notAllowed'), t.t('server.lti.deepLink.outOfDate'));
    }
    const ticket = field(request, 'ticket') ?? '';
    // Read before it is used: someone else's ticket is refused without spending it.
    const pending = await db
      .selectFrom('lti_tickets')
      .select('payload')
      .where('ticket_hash', '=', hashToken(ticket))
      .where('purpose', '=', DEEP_LINK_PURPOSE)
      .where('used_at', 'is', null)
      .where('expires_at', '>', deps.clock.now())
      .executeTakeFirst();
    const expired = () =>
      refuse(
        400,
        'unknown_ticket',
        t.t('server.lti.deepLink.expiredTitle'),
        t.t('server.lti.deepLink.expired'),
      );
    if (pending === undefined) return expired();
    try {
      const payload = parseDeepLinkTicketPayload(JSON.parse(pending.payload) as unknown);
      if (payload.userId !== session.actor.id) {
        return refuse(
          403,
          'other_user',
          t.t('server.lti.deepLink.notAllowed'),
          t.t('server.lti.deepLink.otherUser'),
        );
      }
      const exam = await services.exams.get(session.actor, field(request, 'exam_id') ?? '');
      const response = await buildDeepLinkingResponse(
        { db, keys: services.ltiKeys, publicUrl: config.publicUrl },
        payload,
        exam,
      );
      // Used once: a second submission (back button, double click) finds it spent.
      if ((await consumeTicket({ db, clock: deps.clock }, DEEP_LINK_PURPOSE, ticket)) === undefined) {
        return expired();
      }
      request.log.info(
        { toolProvider: payload.toolProviderId, exam: exam.id, user: session.actor.id },
        'lti deep link sent',
      );
      return sendPage(
        reply,
        autoSubmitPage(
          response.action,
          { JWT: response.jwt },
          {
            title: t.t('server.lti.deepLink.addingTitle'),
            message: t.t('server.lti.deepLink.adding', { exam: exam.name }),
            t,
          },
        ),
      );
    } catch (error) {
      if (error instanceof DeepLinkRefused) {
        return refuse(
          error.status,
          error.code,
          t.t('server.lti.deepLink.cannotAdd'),
          refusalText(t, error.code, error.message),
        );
      }
      if (error instanceof DomainError) {
        return refuse(
          404,
          'unknown_exam',
          t.t('server.lti.deepLink.cannotAdd'),
          t.t('server.lti.deepLink.unknownExam'),
        );
      }
      throw error;
    }
  });
}
