import type { FastifyInstance, FastifyRequest } from 'fastify';
import { liveMessageJson } from '../../domain/live/live-message.ts';
import { resolveCandidateLanguage } from '../../domain/room/language.ts';
import type { Upload } from '../../storage/upload.ts';
import type { RouteDeps } from '../route-deps.ts';
import { pairingQrSvg } from '../mobile/qr.ts';
import { languageRequestOf } from './candidate-language.ts';
import { registerCandidateDataRoutes } from './candidate-data.routes.ts';
import { registerRoomRateLimit } from './rate-limit.ts';
import { registerRecordingRoute } from './recordings.routes.ts';
import { registerRoomAppealRoutes } from './appeal.routes.ts';
import {
  presentCandidateLanguage,
  presentRoomEvent,
  presentRoomFlag,
  presentRoomUpload,
  presentRoomView,
} from './room.presenter.ts';
import {
  roomBreakEndSchema,
  roomBreakStartSchema,
  roomChecksSchema,
  roomEnterSchema,
  roomEventSchema,
  roomFacePhotoSchema,
  roomFinishSchema,
  roomFlagRateSchema,
  roomFlagSchema,
  roomIdCardSchema,
  roomLanguageSchema,
  roomLeaveSchema,
  roomMobilePairingSchema,
  roomMobileQrSchema,
  roomMessagesSchema,
  roomPostMessageSchema,
  roomStartSchema,
  roomUploadSchema,
  roomViewSchema,
} from './room.schemas.ts';

type TokenRoute = { Params: { token: string } };

/** The multipart file part named `file`, if the request carried one. */
function fileOf(request: FastifyRequest): Upload | undefined {
  return request.uploads.find((upload) => upload.field === 'file');
}

/**
 * The candidate exam room's JSON API (contract §11, docs/room-api.md), to be registered under
 * `/api/room`. Unsigned: the token in the path is the only credential. Rate-limited per token,
 * across every process on the database (ROOM_RATE_LIMIT in rate-limit.ts, 429 `rate_limited`).
 * Returns once the scope's routes are registered.
 */
export async function registerRoomRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { room } = deps.services;
  const readerOf = (request: FastifyRequest) => languageRequestOf(request, deps.config);

  registerRoomRateLimit(app, deps);
  // Contesting a final verdict (docs/appeals.md).
  registerRoomAppealRoutes(app, deps);

  app.get<TokenRoute>('/:token', { schema: roomViewSchema }, async (request) =>
    presentRoomView(await room.view(request.params.token), readerOf(request)),
  );

  app.put<TokenRoute>('/:token/checks', { schema: roomChecksSchema }, async (request) =>
    presentRoomView(await room.updateChecks(request.params.token, request.input.values), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/id_card', { schema: roomIdCardSchema }, async (request) =>
    presentRoomView(
      await room.attachPhoto(request.params.token, 'id_card', fileOf(request)),
      readerOf(request),
    ),
  );

  app.post<TokenRoute>('/:token/face_photo', { schema: roomFacePhotoSchema }, async (request) =>
    presentRoomView(
      await room.attachPhoto(request.params.token, 'face_photo', fileOf(request)),
      readerOf(request),
    ),
  );

  app.post<TokenRoute>('/:token/enter', { schema: roomEnterSchema }, async (request) =>
    presentRoomView(await room.enter(request.params.token), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/leave', { schema: roomLeaveSchema }, async (request) =>
    presentRoomView(await room.leave(request.params.token), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/start', { schema: roomStartSchema }, async (request) =>
    presentRoomView(await room.start(request.params.token, request.input.values), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/finish', { schema: roomFinishSchema }, async (request) =>
    presentRoomView(await room.finish(request.params.token), readerOf(request)),
  );

  // Rest breaks (docs/accommodations.md): the clock stops while one runs.
  app.post<TokenRoute>('/:token/break', { schema: roomBreakStartSchema }, async (request) =>
    presentRoomView(await room.startBreak(request.params.token), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/break/end', { schema: roomBreakEndSchema }, async (request) =>
    presentRoomView(await room.endBreak(request.params.token), readerOf(request)),
  );

  // The candidate's pick in the language menu (docs/languages.md), remembered for the session.
  app.put<TokenRoute>('/:token/language', { schema: roomLanguageSchema }, async (request) => {
    const view = await room.chooseLanguage(request.params.token, request.input.values, {
      pseudo: deps.config.pseudoLocale,
    });
    return {
      language: presentCandidateLanguage(resolveCandidateLanguage(view.languageFacts, readerOf(request))),
    };
  });

  // Recording chunks stream straight into the storage, from a scope with its own body handling.
  await app.register((scope) =>
    registerRecordingRoute(scope, (token, params, body) => room.appendRecording(token, params, body)),
  );

  // The phone of a mobile_cam exam (docs/room.md "The phone"): its QR code, and a new pairing.
  app.get<TokenRoute>('/:token/mobile/qr.svg', { schema: roomMobileQrSchema }, async (request, reply) => {
    const url = await deps.services.mobile.pairingUrlOf(request.params.token);
    return reply
      .header('cache-control', 'no-store')
      .type('image/svg+xml; charset=utf-8')
      .send(pairingQrSvg(url));
  });

  app.post<TokenRoute>('/:token/mobile/pairing', { schema: roomMobilePairingSchema }, async (request) => {
    await deps.services.mobile.renewPairing(request.params.token);
    return presentRoomView(await room.view(request.params.token), readerOf(request));
  });

  app.post<TokenRoute>('/:token/uploads', { schema: roomUploadSchema }, async (request, reply) => {
    const upload = await room.addUpload(request.params.token, fileOf(request));
    return reply.code(201).send({ upload: presentRoomUpload(upload) });
  });

  app.post<TokenRoute>('/:token/events', { schema: roomEventSchema }, async (request, reply) => {
    const event = await room.recordEvent(request.params.token, request.input.values);
    return reply.code(201).send({ event: presentRoomEvent(event) });
  });

  // Automated flags (docs/automated-flags.md): one incident per episode, upserted by its key.
  app.post<TokenRoute>('/:token/flags', { schema: roomFlagSchema }, async (request, reply) => {
    const { flag, created } = await room.recordFlag(request.params.token, request.input.values);
    return reply.code(created ? 201 : 200).send({ flag: presentRoomFlag(flag) });
  });

  app.post<TokenRoute>('/:token/flags/rate', { schema: roomFlagRateSchema }, async (request) => {
    const rate = await room.reportFlagsRate(request.params.token, request.input.values);
    return { flags_rate: { hz: rate.hz, lowered: rate.lowered } };
  });

  app.get<TokenRoute>('/:token/messages', { schema: roomMessagesSchema }, async (request) => ({
    messages: (await room.messages(request.params.token)).map(liveMessageJson),
  }));

  app.post<TokenRoute>('/:token/messages', { schema: roomPostMessageSchema }, async (request, reply) => {
    const message = await room.postMessage(request.params.token, request.input.values);
    return reply.code(201).send(liveMessageJson(message));
  });

  // The candidate's own data (docs/candidate-data.md): a code by email, then the zip's address.
  registerCandidateDataRoutes(app, deps);
}
