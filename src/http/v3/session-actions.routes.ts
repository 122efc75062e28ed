import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { endExamSchema } from './session-actions.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/** The V3 student-session actions with an email side effect (contract §7): end_exam. Answers 200. */
export function registerSessionActionRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { mail } = services;

  app.post<IdRoute>('/student_sessions/:id/end_exam', { schema: endExamSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      services.studentSessions,
      await mail.endExam(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));
}
