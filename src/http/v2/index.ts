import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../route-deps.ts';
import { registerV2AttachmentRoutes } from './attachments.routes.ts';
import { registerV2DocumentRoutes } from './documents.routes.ts';
import { registerV2ExamRoutes } from './exams.routes.ts';
import { registerV2StudentSessionRoutes } from './student-sessions.routes.ts';
import { registerAuditHook } from '../audit.ts';

/**
 * The V2 scope (legacy, under /api): `api_token` travels as an ordinary, signed parameter; no header,
 * no Accept rule. Registers every V2 endpoint of api.md.
 */
export function registerV2(app: FastifyInstance, deps: RouteDeps): void {
  app.addHook('preHandler', async (request) => {
    const token = request.input.values.api_token;
    request.actor = await deps.services.authenticator.authenticate(
      typeof token === 'string' ? token : undefined,
      request.input.signing,
    );
  });
  // Successful signed writes go into the audit log, as in V3.
  registerAuditHook(app, deps.services);
  registerV2ExamRoutes(app, deps);
  registerV2StudentSessionRoutes(app, deps);
  registerV2DocumentRoutes(app, deps);
  registerV2AttachmentRoutes(app, deps);
}
