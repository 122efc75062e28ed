import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PracticeService, PracticeRunView } from '../../domain/practice/practice.service.ts';
import type { Upload } from '../../storage/upload.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { registerRoomRateLimit } from './rate-limit.ts';
import {
  practiceBeginSchema,
  practiceChecksSchema,
  practiceFinishSchema,
  practicePhotoSchema,
  practiceRecordingSchema,
  practiceViewSchema,
} from './practice.schemas.ts';

type TokenRoute = { Params: { token: string } };
type RunRoute = { Params: { token: string; run: string } };

/** The multipart file part named `file`, if the request carried one. */
function fileOf(request: FastifyRequest): Upload | undefined {
  return request.uploads.find((upload) => upload.field === 'file');
}

/** A practice run as the API answers it (docs/practice.md). */
export function presentPracticeRun(run: PracticeRunView): Record<string, unknown> {
  return {
    id: run.id,
    status: run.status,
    failed_check: run.failedCheck,
    required_checks: run.required,
    checks: run.outcomes,
    sources: run.sources,
    recording_seconds: run.recordingSeconds,
    recorded_seconds: run.recorded,
    started_at: isoTime(run.startedAt),
    finished_at: isoTime(run.finishedAt),
  };
}

/**
 * The practice run's JSON API (docs/practice.md), to be registered under `/api/room` in a scope of
 * its own: `POST /:token/practice` begins a run, `GET /:token/practice/:run` reads it, `PUT
 * .../checks`, `POST .../photo`, `POST .../recording` and `POST .../finish` carry it through.
 * Unsigned like the room: the token is the only credential. Rate-limited per token as the room is,
 * in a bucket of its own (`practice:`), so a practice never eats into the room's allowance. Returns
 * once registered.
 */
export function registerPracticeRoutes(
  app: FastifyInstance,
  deps: RouteDeps,
  practice: PracticeService,
): Promise<void> {
  registerRoomRateLimit(app, deps, 'practice');

  app.post<TokenRoute>('/:token/practice', { schema: practiceBeginSchema }, async (request, reply) =>
    reply.code(201).send({ practice_run: presentPracticeRun(await practice.begin(request.params.token)) }),
  );

  app.get<RunRoute>('/:token/practice/:run', { schema: practiceViewSchema }, async (request) => ({
    practice_run: presentPracticeRun(await practice.view(request.params.token, request.params.run)),
  }));

  app.put<RunRoute>('/:token/practice/:run/checks', { schema: practiceChecksSchema }, async (request) => ({
    practice_run: presentPracticeRun(
      await practice.recordChecks(request.params.token, request.params.run, request.input.values),
    ),
  }));

  app.post<RunRoute>('/:token/practice/:run/photo', { schema: practicePhotoSchema }, async (request) => ({
    practice_run: presentPracticeRun(
      await practice.checkPhoto(request.params.token, request.params.run, fileOf(request)),
    ),
  }));

  app.post<RunRoute>(
    '/:token/practice/:run/recording',
    { schema: practiceRecordingSchema },
    async (request, reply) => {
      const ack = await practice.appendRecording(
        request.params.token,
        request.params.run,
        request.input.values,
        fileOf(request),
      );
      return reply.code(ack.stored ? 201 : 200).send({ next_sequence: ack.nextSequence });
    },
  );

  app.post<RunRoute>('/:token/practice/:run/finish', { schema: practiceFinishSchema }, async (request) => ({
    practice_run: presentPracticeRun(await practice.finish(request.params.token, request.params.run)),
  }));

  return Promise.resolve();
}
