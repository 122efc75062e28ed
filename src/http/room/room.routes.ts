import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RateLimited } from '../../domain/errors.ts';
import type { Upload } from '../../storage/upload.ts';
import type { ServerDeps } from '../server.ts';
import { presentRoomEvent, presentRoomUpload, presentRoomView } from './room.presenter.ts';
import {
  roomChecksSchema,
  roomEnterSchema,
  roomEventSchema,
  roomFacePhotoSchema,
  roomFinishSchema,
  roomIdCardSchema,
  roomLeaveSchema,
  roomRecordingSchema,
  roomStartSchema,
  roomUploadSchema,
  roomViewSchema,
} from './room.schemas.ts';

type TokenRoute = { Params: { token: string } };

/** Requests one room token may make per window: a page polling every few seconds stays far below. */
export const ROOM_RATE_LIMIT = { max: 120, timeWindowMs: 60_000 } as const;

/** The multipart file part named `file`, if the request carried one. */
function fileOf(request: FastifyRequest): Upload | undefined {
  return request.uploads.find((upload) => upload.field === 'file');
}

/** The token a room request names (the rate-limit key: one bucket per candidate, whatever the IP). */
function tokenOf(request: FastifyRequest): string {
  const params = request.params as { token?: unknown } | undefined;
  return typeof params?.token === 'string' ? params.token : '';
}

/**
 * The candidate exam room's JSON API (contract §11, docs/room-api.md), to be registered under
 * `/api/room`. Unsigned: the token in the path is the only credential. Rate-limited per token
 * (ROOM_RATE_LIMIT, 429 `rate_limited`). Returns once the scope's routes are registered.
 */
export async function registerRoomRoutes(app: FastifyInstance, { services }: ServerDeps): Promise<void> {
  const { room } = services;

  await app.register(rateLimit, {
    max: ROOM_RATE_LIMIT.max,
    timeWindow: ROOM_RATE_LIMIT.timeWindowMs,
    keyGenerator: (request) => `room:${tokenOf(request)}`,
    errorResponseBuilder: (_request, context) =>
      new RateLimited(
        `Too many requests: try again in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`,
      ),
  });

  app.get<TokenRoute>('/:token', { schema: roomViewSchema }, async (request) =>
    presentRoomView(await room.view(request.params.token)),
  );

  app.put<TokenRoute>('/:token/checks', { schema: roomChecksSchema }, async (request) =>
    presentRoomView(await room.updateChecks(request.params.token, request.input.values)),
  );

  app.post<TokenRoute>('/:token/id_card', { schema: roomIdCardSchema }, async (request) =>
    presentRoomView(await room.attachPhoto(request.params.token, 'id_card', fileOf(request))),
  );

  app.post<TokenRoute>('/:token/face_photo', { schema: roomFacePhotoSchema }, async (request) =>
    presentRoomView(await room.attachPhoto(request.params.token, 'face_photo', fileOf(request))),
  );

  app.post<TokenRoute>('/:token/enter', { schema: roomEnterSchema }, async (request) =>
    presentRoomView(await room.enter(request.params.token)),
  );

  app.post<TokenRoute>('/:token/leave', { schema: roomLeaveSchema }, async (request) =>
    presentRoomView(await room.leave(request.params.token)),
  );

  app.post<TokenRoute>('/:token/start', { schema: roomStartSchema }, async (request) =>
    presentRoomView(await room.start(request.params.token)),
  );

  app.post<TokenRoute>('/:token/finish', { schema: roomFinishSchema }, async (request) =>
    presentRoomView(await room.finish(request.params.token)),
  );

  app.post<TokenRoute>('/:token/recordings', { schema: roomRecordingSchema }, async (request, reply) => {
    const ack = await room.appendRecording(request.params.token, request.input.values, fileOf(request));
    return reply.code(ack.stored ? 201 : 200).send({ next_sequence: ack.nextSequence });
  });

  app.post<TokenRoute>('/:token/uploads', { schema: roomUploadSchema }, async (request, reply) => {
    const upload = await room.addUpload(request.params.token, fileOf(request));
    return reply.code(201).send({ upload: presentRoomUpload(upload) });
  });

  app.post<TokenRoute>('/:token/events', { schema: roomEventSchema }, async (request, reply) => {
    const event = await room.recordEvent(request.params.token, request.input.values);
    return reply.code(201).send({ event: presentRoomEvent(event) });
  });
}
