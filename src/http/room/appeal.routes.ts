import type { FastifyInstance } from 'fastify';
import type { RoomAppealState } from '../../domain/appeals/appeals.service.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { roomAppealSchema, roomPostAppealSchema } from './appeal.schemas.ts';

type TokenRoute = { Params: { token: string } };

/**
 * The candidate's view of the appeal: `{verdict, open, deadline, appeal}`, the appeal without staff
 * facts (who decided stays with staff). Returns the JSON object.
 */
export function presentRoomAppeal(state: RoomAppealState): Record<string, unknown> {
  const { appeal } = state;
  return {
    verdict: state.verdict,
    open: state.open,
    deadline: isoTime(state.deadline),
    appeal:
      appeal === undefined
        ? null
        : {
            status: appeal.status,
            statement: appeal.statement,
            submitted_at: isoTime(appeal.submittedAt),
            decided_at: isoTime(appeal.decidedAt),
            comment: appeal.comment,
            files: appeal.files.map((file) => ({ file_name: file.fileName, size: file.size })),
          },
  };
}

/**
 * The candidate's appeal against a final verdict (docs/appeals.md), registered in the room's scope
 * (its rate limit applies): the state for the finished page, and the appeal itself (multipart).
 */
export function registerRoomAppealRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { appeals } = deps.services;

  app.get<TokenRoute>('/:token/appeal', { schema: roomAppealSchema }, async (request) => ({
    appeal: presentRoomAppeal(await appeals.roomState(request.params.token)),
  }));

  app.post<TokenRoute>('/:token/appeal', { schema: roomPostAppealSchema }, async (request, reply) => {
    await appeals.submit(request.params.token, request.input.values, request.uploads, auditClientOf(request));
    const state = await appeals.roomState(request.params.token);
    return reply.code(201).send({ appeal: presentRoomAppeal(state) });
  });
}
