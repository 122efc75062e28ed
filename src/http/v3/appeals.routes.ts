import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentAppealV3 } from './appeals.presenter.ts';
import { putAppealSchema, showAppealSchema } from './appeals.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The V3 appeal routes (docs/appeals.md): read a session's appeal, decide it. */
export function registerAppealRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { appeals } = services;

  app.get<IdRoute>('/student_sessions/:id/appeal', { schema: showAppealSchema }, async (request) => ({
    appeal: presentAppealV3(await appeals.get(actorOf(request), request.params.id)),
  }));

  app.put<IdRoute>('/student_sessions/:id/appeal', { schema: putAppealSchema }, async (request) => ({
    appeal: presentAppealV3(
      await appeals.decide(actorOf(request), request.params.id, request.input.values, auditClientOf(request)),
    ),
  }));
}
