import type { FastifyInstance } from 'fastify';
import type { StudentSession } from '../../domain/student-sessions/student-session.ts';
import { readReviewedChange, sendsSessionChanges } from '../../domain/reviews/review.ts';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { auditVerdictChange } from './reviews.routes.ts';
import { presentOneStudentSessionV3, presentStudentSessionsV3 } from './student-sessions.presenter.ts';
import { auditClientOf } from '../audit.ts';
import {
  addIncidentSchema,
  createStudentSchema,
  destroyStudentSchema,
  listExamStudentsSchema,
  listStudentsSchema,
  showStudentSchema,
  updateStudentSchema,
} from './student-sessions.schemas.ts';

type IdRoute = { Params: { id: string } };
type ExamRoute = { Params: { exam_id: string } };

/** The V3 student-session routes (api.md's catalogue, contract §6). */
export function registerStudentSessionRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { studentSessions } = services;
  const present = (session: StudentSession) =>
    presentOneStudentSessionV3(studentSessions, session, clock.now());
  const presentAll = (sessions: readonly StudentSession[]) =>
    presentStudentSessionsV3(studentSessions, sessions, clock.now());

  app.get<ExamRoute>(
    '/exams/:exam_id/student_sessions',
    { schema: listExamStudentsSchema },
    async (request, reply) => {
      const page = await studentSessions.listForExam(
        actorOf(request),
        request.params.exam_id,
        request.input.values,
      );
      setPaginationHeaders(reply, page);
      return { students: await presentAll(page.items) };
    },
  );

  app.post<ExamRoute>(
    '/exams/:exam_id/student_sessions',
    { schema: createStudentSchema },
    async (request, reply) => {
      const session = await studentSessions.create(
        actorOf(request),
        request.params.exam_id,
        request.input.values,
        auditClientOf(request),
      );
      return reply.code(201).send({
        student: await presentOneStudentSessionV3(studentSessions, session, clock.now(), { created: true }),
      });
    },
  );

  app.get('/student_sessions', { schema: listStudentsSchema }, async (request, reply) => {
    const page = await studentSessions.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { students: await presentAll(page.items) };
  });

  app.get<IdRoute>('/student_sessions/:id', { schema: showStudentSchema }, async (request) => ({
    student: await present(await studentSessions.get(actorOf(request), request.params.id)),
  }));

  app.route<IdRoute>({
    method: ['PATCH', 'PUT'],
    url: '/student_sessions/:id',
    schema: updateStudentSchema,
    handler: async (request) => {
      const actor = actorOf(request);
      const { id } = request.params;
      const params = request.input.values;
      // `reviewed` records a verdict through the review rules (docs/review.md); a reviewer may send
      // it alone. Both parts are read before anything is written, so a bad one changes nothing.
      const verdict = readReviewedChange(params);
      const client = auditClientOf(request);
      if (verdict === undefined) {
        return { student: await present(await studentSessions.update(actor, id, params, client)) };
      }
      if (sendsSessionChanges(params)) await studentSessions.update(actor, id, params, client);
      const { changed } = await services.reviews.recordInput(actor, id, verdict);
      const session = await studentSessions.get(actor, id);
      if (changed) await auditVerdictChange(services, request, actor, session.id);
      return { student: await present(session) };
    },
  });

  app.delete<IdRoute>('/student_sessions/:id', { schema: destroyStudentSchema }, async (request) => {
    await studentSessions.destroy(actorOf(request), request.params.id);
    return {};
  });

  app.post<IdRoute>(
    '/student_sessions/:id/incidents',
    { schema: addIncidentSchema },
    async (request, reply) => {
      const session = await studentSessions.addIncident(
        actorOf(request),
        request.params.id,
        request.input.values,
      );
      return reply.code(201).send({ student: await present(session) });
    },
  );
}
