import type { FastifyInstance } from 'fastify';
import { ImportRejected } from '../../domain/student-sessions/student-import.ts';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentImportRejectedV3, presentImportV3 } from './student-import.presenter.ts';
import { importStudentsSchema } from './student-import.schemas.ts';

type ExamRoute = { Params: { exam_id: string } };

/**
 * Bulk import of student sessions (docs/api-v3-student-sessions.md, Import): 201 with the created
 * records, 200 for a dry run, 422 with `row_errors` when any row is invalid (nothing created).
 */
export function registerStudentImportRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { studentImport, studentSessions } = services;

  app.post<ExamRoute>(
    '/exams/:exam_id/student_sessions/import',
    { schema: importStudentsSchema },
    async (request, reply) => {
      try {
        const outcome = await studentImport.importStudents(
          actorOf(request),
          request.params.exam_id,
          request.input.values,
          auditClientOf(request),
        );
        return reply
          .code(outcome.dryRun ? 200 : 201)
          .send(await presentImportV3(outcome, studentSessions, clock.now()));
      } catch (error) {
        // Every other failure is answered by the shared error map; only this one names rows.
        if (!(error instanceof ImportRejected)) throw error;
        const answer = presentImportRejectedV3(error);
        return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
      }
    },
  );
}
