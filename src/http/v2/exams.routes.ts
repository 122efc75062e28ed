import type { FastifyInstance } from 'fastify';
import { has, type Params, requiredString } from '../../domain/input.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentExamV2 } from './exams.presenter.ts';
import {
  createExamSchemaV2,
  destroyExamSchemaV2,
  listExamsSchemaV2,
  sendEmailsSchemaV2,
  showExamSchemaV2,
  updateExamSchemaV2,
} from './exams.schemas.ts';
import { answer, SAVE_FAILURES, withFailures } from './failures.ts';
import { presentEmailedStudentV2 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/**
 * V2's exam parameter names as the services read them: `duration` is `duration_minutes`,
 * `upload_exam` is `upload_answers` (the V2 name wins when a call sends both). Times need nothing:
 * the services read epoch seconds. Returns new parameters.
 */
function examParamsFromV2(values: Params): Params {
  const params: Record<string, unknown> = { ...values };
  if (has(values, 'duration')) params.duration_minutes = values.duration;
  if (has(values, 'upload_exam')) params.upload_answers = values.upload_exam;
  return params;
}

/** The V2 exam endpoints (api.md "V2 endpoints", Exams), over the same service as V3's. */
export function registerV2ExamRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { exams, mail } = services;

  app.get('/exams', { schema: listExamsSchemaV2 }, async (request) => ({
    exams: (await exams.listOwned(actorOf(request))).map(presentExamV2),
  }));

  app.get<IdRoute>('/exams/:id', { schema: showExamSchemaV2 }, async (request) => ({
    exam: presentExamV2(await exams.get(actorOf(request), request.params.id)),
  }));

  app.post(
    '/exams',
    { schema: createExamSchemaV2 },
    withFailures([answer(400, SAVE_FAILURES)], async (request, reply) => {
      const actor = actorOf(request);
      // api.md: V2 create requires `duration` even without use_duration, as Rails did for V2 clients.
      requiredString(request.input.values, 'duration');
      const exam = await exams.create(actor, examParamsFromV2(request.input.values));
      // api.md: documented as 200, but the Rails service answered 201 and V2 clients expect that.
      return reply.code(201).send({ id: exam.id });
    }),
  );

  // api.md: "400 on failure", so an exam that is missing or out of scope answers 400 here, not 404.
  app.post<IdRoute>(
    '/exams/:id',
    { schema: updateExamSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request, reply) => {
      await exams.update(actorOf(request), request.params.id, examParamsFromV2(request.input.values));
      return reply.code(200).send();
    }),
  );

  app.delete<IdRoute>(
    '/exams/:id',
    { schema: destroyExamSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request, reply) => {
      await exams.destroy(actorOf(request), request.params.id);
      return reply.code(200).send();
    }),
  );

  // The same action as V3 send_emails; V2 names the list `student_sessions` and adds `use_duration`.
  // api.md gives no failure column: a missing or unseen exam answers V2's empty 404, a role refusal 403.
  app.post<IdRoute>('/exams/:id/send_emails', { schema: sendEmailsSchemaV2 }, async (request) => ({
    student_sessions: (await mail.sendExamEmails(actorOf(request), request.params.id)).map(
      presentEmailedStudentV2,
    ),
  }));
}
