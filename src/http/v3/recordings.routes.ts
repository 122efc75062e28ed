import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentRecordingV3 } from './recordings.presenter.ts';
import { listRecordingsSchema } from './recordings.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * A session's finalised recordings (docs/recordings.md): 200 `{"recordings": [...]}`, a completed
 * one with an expiring address of its WebM file.
 */
export function registerRecordingRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { recordings } = services;

  app.get<IdRoute>('/student_sessions/:id/recordings', { schema: listRecordingsSchema }, async (request) => {
    const list = await recordings.list(actorOf(request), request.params.id);
    return { recordings: list.map(presentRecordingV3) };
  });
}
