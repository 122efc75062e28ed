import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PhoneView } from '../../domain/mobile/mobile.service.ts';
import { type LanguageRequest, resolveCandidateLanguage } from '../../domain/room/language.ts';
import type { Upload } from '../../storage/upload.ts';
import { registerRecordingRoute } from '../room/recordings.routes.ts';
import { registerRoomRateLimit } from '../room/rate-limit.ts';
import { languageRequestOf } from '../room/candidate-language.ts';
import { candidateTimeZone, presentCandidateLanguage, presentRoomPrivacy } from '../room/room.presenter.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { breakEndsAt } from '../../domain/student-sessions/deadline.ts';
import {
  phoneCheckSchema,
  phoneHeartbeatSchema,
  phoneHelloSchema,
  phoneLanguageSchema,
  phoneLeaveSchema,
  phoneRecordingSchema,
  phoneViewSchema,
} from './mobile.schemas.ts';

type TokenRoute = { Params: { token: string } };

/**
 * The phone's view: `{mobile: {status, check, next_sequence, chunks_count}, session: {status,
 * student_name, start_time, end_time, ends_at, deadline_at, time_left_seconds, break}, exam: {name,
 * live_proctoring, timezone, record_during_breaks}, server_time, language: {current, available}, message_overrides, privacy}`. Nothing the phone
 * does not need (no room token, PIN or email). `reader` is what the request says about the
 * language. Returns the JSON.
 */
export function presentPhoneView(view: PhoneView, reader: LanguageRequest): Record<string, unknown> {
  const { session, exam, deadline, now } = view;
  const started = session.status === 'exam_started';
  return {
    mobile: {
      status: view.status,
      check: session.mobileCheck,
      next_sequence: view.nextSequence,
      chunks_count: view.chunksCount,
    },
    session: {
      status: session.status,
      student_name: session.name,
      start_time: isoTime(session.startTime),
      end_time: isoTime(session.endTime),
      ends_at: isoTime(deadline),
      // The one clock's instant (deadline.ts), the same as the room's session.deadline_at.
      deadline_at: isoTime(deadline),
      time_left_seconds:
        started && deadline !== null ? Math.max(0, Math.ceil((deadline - now) / 1000)) : null,
      // The candidate's running rest break: the clock stands still (and with record_during_breaks
      // false the phone pauses its recording) until it ends.
      break:
        session.breakStartedAt === null
          ? null
          : { started_at: isoTime(session.breakStartedAt), ends_at: isoTime(breakEndsAt(session)) },
    },
    exam: {
      name: exam.name,
      live_proctoring: exam.type === 'live_proctoring',
      timezone: candidateTimeZone(exam),
      record_during_breaks: exam.recordDuringBreaks,
    },
    server_time: isoTime(now),
    language: presentCandidateLanguage(resolveCandidateLanguage(view.languageFacts, reader)),
    message_overrides: view.messageOverrides,
    // The room's privacy panel: the phone shows it before its camera is used.
    privacy: presentRoomPrivacy(view.privacy),
  };
}

function fileOf(request: FastifyRequest): Upload | undefined {
  return request.uploads.find((upload) => upload.field === 'file');
}

/**
 * The phone's JSON API (docs/room-api.md "Phone API"), to be registered under `/api/mobile`.
 * Unsigned: the pairing token in the path is the only credential, and it works nowhere else.
 * Rate-limited per token like the room (ROOM_RATE_LIMIT, counted apart from the room's own token).
 * Returns once the scope's routes are registered.
 */
export async function registerMobileRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { mobile } = deps.services;
  const readerOf = (request: FastifyRequest) => languageRequestOf(request, deps.config);

  registerRoomRateLimit(app, deps, 'phone');

  app.get<TokenRoute>('/:token', { schema: phoneViewSchema }, async (request) =>
    presentPhoneView(await mobile.view(request.params.token), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/hello', { schema: phoneHelloSchema }, async (request) =>
    presentPhoneView(await mobile.hello(request.params.token, request.input.values), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/heartbeat', { schema: phoneHeartbeatSchema }, async (request) =>
    presentPhoneView(await mobile.heartbeat(request.params.token, request.input.values), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/check', { schema: phoneCheckSchema }, async (request) =>
    presentPhoneView(await mobile.check(request.params.token, fileOf(request)), readerOf(request)),
  );

  app.post<TokenRoute>('/:token/leave', { schema: phoneLeaveSchema }, async (request) =>
    presentPhoneView(await mobile.leave(request.params.token), readerOf(request)),
  );

  // The candidate's pick in the phone page's language menu, stored on the session (docs/languages.md).
  app.put<TokenRoute>('/:token/language', { schema: phoneLanguageSchema }, async (request) => {
    const view = await mobile.chooseLanguage(request.params.token, request.input.values, {
      pseudo: deps.config.pseudoLocale,
    });
    return {
      language: presentCandidateLanguage(resolveCandidateLanguage(view.languageFacts, readerOf(request))),
    };
  });

  // The phone's chunks stream straight into the storage, like the room's.
  await app.register((scope) =>
    registerRecordingRoute(
      scope,
      (token, params, body) => mobile.appendRecording(token, params, body),
      phoneRecordingSchema,
    ),
  );
}
