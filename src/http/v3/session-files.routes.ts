import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentSessionFileV3 } from './session-files.presenter.ts';
import { listSessionFilesSchema } from './session-files.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * The files the candidate room stored for a student session (an Invigil addition beyond api.md):
 * 200 `{"files": [...]}`, each with an expiring download address, optionally of one `kind`.
 */
export function registerSessionFileRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { sessionFiles } = services;

  app.get<IdRoute>('/student_sessions/:id/files', { schema: listSessionFilesSchema }, async (request) => {
    const files = await sessionFiles.list(actorOf(request), request.params.id, request.input.values);
    return { files: files.map(presentSessionFileV3) };
  });
}
