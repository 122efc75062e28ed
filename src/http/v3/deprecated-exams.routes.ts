import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StudentSession } from '../../domain/student-sessions/student-session.ts';
import { parseId } from '../../domain/ids.ts';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentOneStudentSessionV3, presentStudentSessionsV3 } from './student-sessions.presenter.ts';
import { auditClientOf } from '../audit.ts';
import {
  addStudentSchema,
  deleteStudentSchema,
  indexStudentsSchema,
  showStudentInExamSchema,
  showStudentLiteralSchema,
} from './student-sessions.schemas.ts';

type IdRoute = { Params: { id: string } };

/** Where the successor of a deprecated call lives, from its request. */
type Successor = (request: FastifyRequest) => string;

/**
 * `/api/v3/student_sessions/ID` for the `student_session_id` sent, or the collection when none is.
 * The header is written before authentication, so it echoes only a well-formed id (parseId), never
 * other text a caller sent.
 */
const sessionSuccessor: Successor = (request) => {
  const raw = request.input.values.student_session_id;
  const id = parseId(typeof raw === 'string' ? raw.trim() : raw);
  return id === undefined ? '/api/v3/student_sessions' : `/api/v3/student_sessions/${id}`;
};

/** `/api/v3/exams/ID/student_sessions`, or the exam list for a path id that names no record. */
const examSessionsSuccessor: Successor = (request) => {
  const id = parseId((request.params as { id: string }).id);
  return id === undefined ? '/api/v3/exams' : `/api/v3/exams/${id}/student_sessions`;
};

/**
 * A route hook that marks every answer of a deprecated call (errors included) with `Deprecation:
 * true` and a `Link` to its successor. It runs once the parameters are merged (the successor may
 * name one) and before authentication, so even a refused call learns where to go.
 */
function deprecated(successor: Successor) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('Deprecation', 'true');
    reply.header('Link', `<${successor(request)}>; rel="successor-version"`);
  };
}

/**
 * The exam endpoints api.md marks deprecated, answering exactly as their student_sessions
 * successors do. Registered before the other exam sub-routes; the literal `/exams/id/show_student`
 * (api.md's path as written) is a static route and so wins over `/exams/:id/show_student`.
 */
export function registerDeprecatedExamRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { studentSessions } = services;
  const present = (session: StudentSession) =>
    presentOneStudentSessionV3(studentSessions, session, clock.now());

  app.get<IdRoute>(
    '/exams/:id/index_students',
    { schema: indexStudentsSchema, preValidation: deprecated(examSessionsSuccessor) },
    async (request, reply) => {
      const page = await studentSessions.listForExam(
        actorOf(request),
        request.params.id,
        request.input.values,
      );
      setPaginationHeaders(reply, page);
      return { students: await presentStudentSessionsV3(studentSessions, page.items, clock.now()) };
    },
  );

  app.get(
    '/exams/id/show_student',
    { schema: showStudentLiteralSchema, preValidation: deprecated(sessionSuccessor) },
    async (request) => ({
      student: await present(await studentSessions.getByParam(actorOf(request), request.input.values)),
    }),
  );

  app.get<IdRoute>(
    '/exams/:id/show_student',
    { schema: showStudentInExamSchema, preValidation: deprecated(sessionSuccessor) },
    async (request) => ({
      student: await present(
        await studentSessions.getInExam(actorOf(request), request.params.id, request.input.values),
      ),
    }),
  );

  app.post<IdRoute>(
    '/exams/:id/add_student',
    { schema: addStudentSchema, preValidation: deprecated(examSessionsSuccessor) },
    async (request, reply) => {
      const session = await studentSessions.create(
        actorOf(request),
        request.params.id,
        request.input.values,
        auditClientOf(request),
      );
      return reply.code(201).send({
        student: await presentOneStudentSessionV3(studentSessions, session, clock.now(), { created: true }),
      });
    },
  );

  app.delete<IdRoute>(
    '/exams/:id/delete_student',
    { schema: deleteStudentSchema, preValidation: deprecated(sessionSuccessor) },
    async (request) => {
      await studentSessions.destroyInExam(actorOf(request), request.params.id, request.input.values);
      return {};
    },
  );
}
