import type { FastifyInstance } from 'fastify';
import { NotAcceptable } from '../../domain/errors.ts';
import { tokenFromHeader } from '../auth/authenticate.ts';
import type { ServerDeps } from '../server.ts';
import { v3Answer } from '../errors.ts';
import { registerAttachmentRoutes } from './attachments.routes.ts';
import { registerDeprecatedExamRoutes } from './deprecated-exams.routes.ts';
import { registerDocumentRoutes } from './documents.routes.ts';
import { registerExamStaffRoutes } from './exam-staff.routes.ts';
import { registerExamRoutes } from './exams.routes.ts';
import { registerIdentityProviderRoutes } from './identity-providers.routes.ts';
import { registerInstituteRoutes } from './institutes.routes.ts';
import { registerLtiResourceRoutes } from './lti-resources.routes.ts';
import { registerToolProviderRoutes } from './tool-providers.routes.ts';
import { registerUserRoutes } from './users.routes.ts';
import { registerExamActionRoutes } from './exam-actions.routes.ts';
import { registerPhotoRoutes } from './photos.routes.ts';
import { registerSessionActionRoutes } from './session-actions.routes.ts';
import { registerSessionFileRoutes } from './session-files.routes.ts';
import { registerZipRoutes } from './zip.routes.ts';
import { registerStudentSessionRoutes } from './student-sessions.routes.ts';

const V3_MEDIA_TYPES = ['application/vnd.service.v3', 'application/vnd.procwise.v3'];

/**
 * The V3 scope: every route needs an Accept naming V3 (406 otherwise) and a signed request with the
 * token header (403 otherwise), checked before any handler runs.
 */
export function registerV3(app: FastifyInstance, deps: ServerDeps): void {
  app.addHook('onRequest', async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (!V3_MEDIA_TYPES.some((type) => accept.includes(type))) {
      const answer = v3Answer(new NotAcceptable('Not Acceptable'));
      return reply.code(answer.status).send(answer.body);
    }
    return undefined;
  });
  app.addHook('preHandler', async (request) => {
    request.actor = await deps.services.authenticator.authenticate(
      tokenFromHeader(request.headers.authorization),
      request.input.signing,
    );
  });
  registerExamRoutes(app, deps);
  registerDeprecatedExamRoutes(app, deps);
  registerDocumentRoutes(app, deps);
  registerAttachmentRoutes(app, deps);
  registerStudentSessionRoutes(app, deps);
  registerPhotoRoutes(app, deps);
  registerSessionFileRoutes(app, deps);
  registerExamActionRoutes(app, deps);
  registerSessionActionRoutes(app, deps);
  registerZipRoutes(app, deps);
  registerExamStaffRoutes(app, deps);
  registerInstituteRoutes(app, deps);
  registerUserRoutes(app, deps);
  registerToolProviderRoutes(app, deps);
  registerLtiResourceRoutes(app, deps);
  registerIdentityProviderRoutes(app, deps);
}
