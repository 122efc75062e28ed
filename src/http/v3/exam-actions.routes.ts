import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { sendEmailsSchema } from './exam-actions.schemas.ts';
import { presentStudentSessionsV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/** The V3 exam actions with an email side effect (contract §7): send_emails. Answers 200. */
export function registerExamActionRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { mail } = services;

  app.post<IdRoute>('/exams/:id/send_emails', { schema: sendEmailsSchema }, async (request) => ({
    students: await presentStudentSessionsV3(
      services.studentSessions,
      await mail.sendExamEmails(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));
}
