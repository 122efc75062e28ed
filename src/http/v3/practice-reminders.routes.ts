import type { FastifyInstance } from 'fastify';
import { createOutbox } from '../../domain/mail/outbox-writer.ts';
import { createPracticeRemindersService } from '../../domain/practice/reminders.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';

type IdRoute = { Params: { id: string } };

export const practiceRemindersSchema = {
  tags: ['exams'],
  summary: 'Email a practice reminder to the students who have not passed a practice run',
  description:
    'Emails every student of the exam (archived ones aside) whose `practice_status` is not `passed` ' +
    'and whose session has not started or finished a reminder with their personal practice link ' +
    '({PUBLIC_URL}/room/<token>/practice, docs/practice.md), in the student’s language, through the ' +
    'outbox; sets their `practice_reminded_at`. Answers how many were emailed. ' +
    "404 `Couldn't find Exam with 'id'=ID` when the exam is missing or out of scope; 403 when the " +
    'caller sees it but may not manage it.',
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: { sent: { type: 'integer', minimum: 0, description: 'How many students were emailed' } },
      required: ['sent'],
    },
    404: errorBody,
    ...commonErrors,
  },
} as const;

/** `POST /exams/:id/practice_reminders` (docs/practice.md). Answers 200 `{ "sent": N }`. */
export function registerPracticeReminderRoutes(
  app: FastifyInstance,
  { services, clock, database, config }: RouteDeps,
): void {
  const reminders = createPracticeRemindersService({
    db: database.db,
    clock,
    outbox: createOutbox({ clock, jobs: services.jobs }),
    publicUrl: config.publicUrl,
  });

  app.post<IdRoute>('/exams/:id/practice_reminders', { schema: practiceRemindersSchema }, async (request) =>
    reminders.sendReminders(actorOf(request), request.params.id),
  );
}
