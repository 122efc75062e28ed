import type { FastifyInstance } from 'fastify';
import type { User } from '../../domain/users/user.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import {
  addComanagerSchema,
  assignProctorSchema,
  removeComanagerSchema,
  unassignProctorSchema,
} from './exam-staff.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';
import { presentUserV3, userInstitutes } from './users.presenter.ts';

type IdRoute = { Params: { id: string } };

/**
 * The exam-staff actions (contract §7): co-managers of an exam, and the proctor of a student
 * session. Every answer is 200.
 */
export function registerExamStaffRoutes(
  app: FastifyInstance,
  { services, database, clock }: RouteDeps,
): void {
  const { examStaff } = services;
  const present = async (user: User) =>
    presentUserV3(user, await userInstitutes(database.db)(user.instituteId));

  app.put<IdRoute>('/exams/:id/add_comanager', { schema: addComanagerSchema }, async (request) => ({
    comanager: await present(
      await examStaff.addComanager(actorOf(request), request.params.id, request.input.values),
    ),
  }));

  app.delete<IdRoute>('/exams/:id/remove_comanager', { schema: removeComanagerSchema }, async (request) => ({
    comanager: await present(
      await examStaff.removeComanager(actorOf(request), request.params.id, request.input.values),
    ),
  }));

  app.post<IdRoute>(
    '/student_sessions/:id/assign_proctor',
    { schema: assignProctorSchema },
    async (request) => {
      const assignment = await examStaff.assignProctor(
        actorOf(request),
        request.params.id,
        request.input.values,
      );
      return {
        student: await presentOneStudentSessionV3(services.studentSessions, assignment.session, clock.now()),
        active_proctoring_sessions: assignment.activeProctoringSessions,
      };
    },
  );

  app.delete<IdRoute>(
    '/student_sessions/:id/assigned_proctor',
    { schema: unassignProctorSchema },
    async (request) => ({
      student: await presentOneStudentSessionV3(
        services.studentSessions,
        await examStaff.unassignProctor(actorOf(request), request.params.id),
        clock.now(),
      ),
    }),
  );
}
