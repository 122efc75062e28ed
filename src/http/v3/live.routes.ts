import type { FastifyInstance } from 'fastify';
import { liveMessageJson } from '../../domain/live/live-message.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import {
  admitSchema,
  listMessagesSchema,
  pauseSchema,
  postMessageSchema,
  resumeSchema,
} from './live.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/**
 * A proctor's live actions on a student session (Invigil additions, docs/api-live.md): the chat
 * with the candidate, admitting after a live ID check, pausing and resuming the candidate's clock.
 */
export function registerLiveRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { live, studentSessions } = services;

  app.get<IdRoute>('/student_sessions/:id/messages', { schema: listMessagesSchema }, async (request) => ({
    messages: (await live.messages(actorOf(request), request.params.id)).map(liveMessageJson),
  }));

  app.post<IdRoute>(
    '/student_sessions/:id/messages',
    { schema: postMessageSchema },
    async (request, reply) => {
      const message = await live.postMessage(actorOf(request), request.params.id, request.input.values);
      return reply.code(201).send(liveMessageJson(message));
    },
  );

  app.post<IdRoute>('/student_sessions/:id/admit', { schema: admitSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      studentSessions,
      await live.admit(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));

  app.post<IdRoute>('/student_sessions/:id/pause', { schema: pauseSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      studentSessions,
      await live.pause(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));

  app.post<IdRoute>('/student_sessions/:id/resume', { schema: resumeSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      studentSessions,
      await live.resume(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));
}
