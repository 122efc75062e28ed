import type { FastifyInstance } from 'fastify';
import type { ServerDeps } from '../server.ts';
import { registerV2ExamRoutes } from './exams.routes.ts';

/** The V2 scope: `api_token` travels as an ordinary, signed parameter; no header, no Accept rule. */
export function registerV2(app: FastifyInstance, deps: ServerDeps): void {
  app.addHook('preHandler', async (request) => {
    const token = request.input.values.api_token;
    request.actor = await deps.services.authenticator.authenticate(
      typeof token === 'string' ? token : undefined,
      request.input.signing,
    );
  });
  registerV2ExamRoutes(app, deps);
}
