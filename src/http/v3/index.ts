import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/access.ts';
import { NotAcceptable, Unauthorized } from '../../domain/errors.ts';
import { type TokenUser, tokenFromHeader } from '../auth/authenticate.ts';
import { hasBody } from '../connection-guard.ts';
import { cookieActor } from '../staff/session-cookie.ts';
import type { RouteDeps } from '../route-deps.ts';
import { v3Answer } from '../errors.ts';
import { registerAttachmentRoutes } from './attachments.routes.ts';
import { registerDeprecatedExamRoutes } from './deprecated-exams.routes.ts';
import { registerDocumentRoutes } from './documents.routes.ts';
import { registerExamStaffRoutes } from './exam-staff.routes.ts';
import { registerExamRoutes } from './exams.routes.ts';
import { registerIdentityProviderRoutes } from './identity-providers.routes.ts';
import { registerInstituteRoutes } from './institutes.routes.ts';
import { registerMessageOverrideRoutes } from './message-overrides.routes.ts';
import { registerLtiResourceRoutes } from './lti-resources.routes.ts';
import { registerToolProviderRoutes } from './tool-providers.routes.ts';
import { registerUserRoutes } from './users.routes.ts';
import { registerExamActionRoutes } from './exam-actions.routes.ts';
import { registerPracticeReminderRoutes } from './practice-reminders.routes.ts';
import { registerPhotoRoutes } from './photos.routes.ts';
import { registerSessionActionRoutes } from './session-actions.routes.ts';
import { registerSessionFileRoutes } from './session-files.routes.ts';
import { registerRecordingRoutes } from './recordings.routes.ts';
import { registerZipRoutes } from './zip.routes.ts';
import { registerStudentSessionRoutes } from './student-sessions.routes.ts';
import { registerAuditHook } from '../audit.ts';
import { registerStaffViewRoutes } from './staff-views.routes.ts';
import { registerAuditEventRoutes } from './audit-events.routes.ts';
import { registerStudentImportRoutes } from './student-import.routes.ts';
import { registerEmailPreviewRoutes } from './email-preview.routes.ts';
import { registerEmailDeliveryRoutes } from './email-deliveries.routes.ts';
import { registerMonitorRoutes } from './monitor.routes.ts';
import { registerOutboxRoutes } from './outbox.routes.ts';
import { registerUserInvitationRoutes } from './user-invitations.routes.ts';
import { registerWebhookRoutes } from './webhooks.routes.ts';
import { registerReviewRoutes } from './reviews.routes.ts';
import { registerAppealRoutes } from './appeals.routes.ts';
import { registerRetentionRoutes } from './retention.routes.ts';
import { registerReportRoutes } from './reports.routes.ts';
import { registerLiveRoutes } from './live.routes.ts';
import { registerFlagRoutes } from './flags.routes.ts';
import { registerProcessingRecordRoutes } from './processing-record.routes.ts';

const V3_MEDIA_TYPES = ['application/vnd.service.v3', 'application/vnd.procwise.v3'];

/**
 * True when an `Accept` header names a V3 media type: the header is read as a comma-separated list
 * of media ranges, each compared as a whole (type case-insensitive, parameters such as `;q=0.9`
 * ignored, a `+json` structured suffix allowed), so `application/vnd.procwise.v33` is no match.
 * A range with `q=0` refuses the type; wildcards (`*\/*`, `application/*`) never match, since V3
 * must be asked for by name (contract §3).
 */
export function acceptsV3(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
    const name = type.toLowerCase().replace(/\+json$/, '');
    if (!V3_MEDIA_TYPES.includes(name)) return false;
    const quality = parameters.find((parameter) => /^q\s*=/i.test(parameter));
    return quality === undefined || Number(quality.split('=')[1]) > 0;
  });
}

/**
 * The credential a V3 request shows in its headers, checked before its body is read, so a large
 * JSON or form body from a caller without one is never parsed: the staff session cookie in full (the
 * actor), else the token of the Authorization header, which must name an active user. Returns what
 * it found; throws Unauthorized (403, the answer the full check would give) after asking for the
 * connection to be closed when the unread body is larger than MAX_BODY_BYTES (or of unknown size).
 */
async function credentialBeforeBody(
  deps: RouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ actor: Actor } | { user: TokenUser }> {
  try {
    const actor = await cookieActor(deps.services, request);
    if (actor !== undefined) return { actor };
    const token = tokenFromHeader(request.headers.authorization);
    if (token === undefined || token === '') throw new Unauthorized('before the body: no api token');
    const user = await deps.services.users.authenticate(token);
    if (user === undefined) throw new Unauthorized('before the body: unknown token or inactive user');
    return { user };
  } catch (error) {
    const length = Number(request.headers['content-length']);
    if (!(length <= deps.config.maxBodyBytes)) reply.header('connection', 'close');
    throw error;
  }
}

/**
 * The V3 scope: every route needs an Accept naming V3 (406 otherwise) and either a signed request
 * with the token header or a staff session cookie (with X-CSRF-Token unless GET or HEAD), 403
 * otherwise, checked before any handler runs (and, as far as the headers show, before a body is read).
 */
export function registerV3(app: FastifyInstance, deps: RouteDeps): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!acceptsV3(request.headers.accept)) {
      const answer = v3Answer(new NotAcceptable('Not Acceptable'));
      return reply.code(answer.status).send(answer.body);
    }
    return undefined;
  });
  // What the headers already prove, per request with a body: its cookie's actor, or the user its
  // token names (the signature covers the body's parameters, so it is checked after the body).
  const beforeBody = new WeakMap<FastifyRequest, { actor: Actor } | { user: TokenUser }>();
  app.addHook('preParsing', async (request, reply, payload) => {
    // Multipart bodies are checked the same way by src/http/uploads.ts.
    if (!hasBody(request.headers) || request.isMultipart()) return payload;
    beforeBody.set(request, await credentialBeforeBody(deps, request, reply));
    return payload;
  });
  app.addHook('preHandler', async (request) => {
    const known = beforeBody.get(request);
    if (known !== undefined && 'actor' in known) {
      request.actor = known.actor;
      return;
    }
    // The console's requests carry the staff session cookie (and X-CSRF-Token on changes) instead
    // of a signature; a request with an Authorization header is always judged by its signature.
    request.actor =
      (known === undefined ? await cookieActor(deps.services, request) : undefined) ??
      (await deps.services.authenticator.authenticate(
        tokenFromHeader(request.headers.authorization),
        request.input.signing,
        known?.user,
      ));
  });
  // Successful writes of any authenticated caller, signed or cookie, go into the audit log.
  registerAuditHook(app, deps.services);
  // Staff reads of a candidate's media and report are audit events too (docs/candidate-data.md).
  registerStaffViewRoutes(app, deps);
  registerExamRoutes(app, deps);
  registerDeprecatedExamRoutes(app, deps);
  registerDocumentRoutes(app, deps);
  registerAttachmentRoutes(app, deps);
  registerStudentSessionRoutes(app, deps);
  registerStudentImportRoutes(app, deps);
  registerEmailPreviewRoutes(app, deps);
  registerEmailDeliveryRoutes(app, deps);
  registerMonitorRoutes(app, deps);
  registerPhotoRoutes(app, deps);
  registerSessionFileRoutes(app, deps);
  registerRecordingRoutes(app, deps);
  registerExamActionRoutes(app, deps);
  registerPracticeReminderRoutes(app, deps);
  registerSessionActionRoutes(app, deps);
  registerZipRoutes(app, deps);
  registerExamStaffRoutes(app, deps);
  registerInstituteRoutes(app, deps);
  registerMessageOverrideRoutes(app, deps);
  registerUserRoutes(app, deps);
  registerToolProviderRoutes(app, deps);
  registerLtiResourceRoutes(app, deps);
  registerIdentityProviderRoutes(app, deps);
  registerAuditEventRoutes(app, deps);
  registerOutboxRoutes(app, deps);
  registerUserInvitationRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerReviewRoutes(app, deps);
  registerAppealRoutes(app, deps);
  registerRetentionRoutes(app, deps);
  registerReportRoutes(app, deps);
  registerLiveRoutes(app, deps);
  registerFlagRoutes(app, deps);
  registerProcessingRecordRoutes(app, deps);
}
