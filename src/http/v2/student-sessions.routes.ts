import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { answer, INPUT_FAILURES, railsErrors, SAVE_FAILURES, withFailures } from './failures.ts';
import { presentStudentSessionV2 } from './student-sessions.presenter.ts';
import {
  addStudentSchemaV2,
  deleteStudentSchemaV2,
  showStudentsSchemaV2,
} from './student-sessions.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * The V2 student endpoints under an exam (api.md "V2 endpoints", Exams), over the same
 * student-session service as V3. (`send_emails` lives with the exam routes.)
 */
export function registerV2StudentSessionRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { studentSessions } = services;

  app.get<IdRoute>('/exams/:id/show_students', { schema: showStudentsSchemaV2 }, async (request) => ({
    // The key is singular though it holds an array: V2 clients of the Rails service read exactly this name.
    student_session: (await studentSessions.listAllForExam(actorOf(request), request.params.id)).map(
      presentStudentSessionV2,
    ),
  }));

  app.post<IdRoute>(
    '/exams/:id/add_student',
    { schema: addStudentSchemaV2 },
    withFailures<IdRoute>(
      // The one V2 failure with a body: Rails' `{"errors": {FIELD: [...]}}`, as V2 clients of Rails parse it.
      // An unknown or unseen exam is not a failed save and keeps V2's empty 404.
      [{ status: 400, codes: INPUT_FAILURES, body: railsErrors }],
      async (request) => ({
        // api.md: 200, not 201, on this create, for V2 clients built on the Rails service.
        student_session: presentStudentSessionV2(
          await studentSessions.create(
            actorOf(request),
            request.params.id,
            request.input.values,
            auditClientOf(request),
          ),
        ),
      }),
    ),
  );

  // api.md: "404 on failure": a missing student_session_id too.
  app.delete<IdRoute>(
    '/exams/:id/delete_student',
    { schema: deleteStudentSchemaV2 },
    withFailures<IdRoute>([answer(404, SAVE_FAILURES)], async (request, reply) => {
      await studentSessions.destroyInExam(actorOf(request), request.params.id, request.input.values);
      return reply.code(200).send();
    }),
  );
}
