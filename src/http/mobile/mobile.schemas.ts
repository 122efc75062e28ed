import { MOBILE_STATUSES } from '../../domain/mobile/mobile.ts';
import { CHECK_VALUES, SESSION_STATUSES } from '../../domain/student-sessions/status.ts';
import {
  candidateLanguageRecord,
  examTimeZone,
  languageChoice,
  messageOverridesRecord,
  privacyRecord,
  roomRecordingSchema,
} from '../room/room.schemas.ts';

/** The phone's JSON API (docs/room-api.md "Phone API"): the pairing token in the path is its credential. */

const tags = ['candidate room'];

const tokenParam = {
  type: 'object',
  properties: { token: { type: 'string', description: 'The phone’s pairing token (mobile.pairing_url)' } },
  required: ['token'],
} as const;

const errorBody = {
  type: 'object',
  properties: { error: { type: 'string' } },
  required: ['error'],
} as const;

const time = { type: ['string', 'null'], format: 'date-time' } as const;

const errors = {
  404: { description: 'No session has this pairing token (never made, or replaced)', ...errorBody },
  409: { description: 'The session is finished, or the step does not fit its status', ...errorBody },
  422: { description: 'A parameter is invalid', ...errorBody },
  429: { description: 'Too many requests for this token', ...errorBody },
} as const;

const phoneView = {
  type: 'object',
  properties: {
    mobile: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: [...MOBILE_STATUSES] },
        check: { type: 'string', enum: [...CHECK_VALUES], description: 'The session’s mobile_check' },
        next_sequence: { type: 'integer', description: 'The sequence of the phone’s next recording chunk' },
        chunks_count: { type: 'integer' },
      },
      required: ['status', 'check', 'next_sequence', 'chunks_count'],
    },
    session: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: [...SESSION_STATUSES] },
        student_name: { type: 'string' },
        start_time: time,
        end_time: time,
        ends_at: time,
        deadline_at: {
          ...time,
          description:
            'When the exam ends for the candidate (docs/accommodations.md, the one clock): the same ' +
            'instant as ends_at and as the room’s session.deadline_at; null until started',
        },
        time_left_seconds: {
          type: ['integer', 'null'],
          description: 'Seconds until deadline_at by the server clock; stands still during a rest break',
        },
        break: {
          type: ['object', 'null'],
          description: 'The candidate’s running rest break (the clock stands still); null otherwise',
          properties: {
            started_at: { type: 'string', format: 'date-time' },
            ends_at: { ...time, description: 'When it ends by itself; null when nothing limits it' },
          },
          required: ['started_at', 'ends_at'],
        },
      },
      required: [
        'status',
        'student_name',
        'start_time',
        'end_time',
        'ends_at',
        'deadline_at',
        'time_left_seconds',
        'break',
      ],
    },
    exam: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        live_proctoring: { type: 'boolean', description: 'The phone also publishes live (docs/api-live.md)' },
        timezone: examTimeZone,
        record_during_breaks: {
          type: 'boolean',
          description: 'False: the phone pauses its recording while a rest break runs',
        },
      },
      required: ['name', 'live_proctoring', 'timezone', 'record_during_breaks'],
    },
    server_time: { type: 'string', format: 'date-time' },
    language: candidateLanguageRecord,
    message_overrides: messageOverridesRecord,
    privacy: privacyRecord,
  },
  required: ['mobile', 'session', 'exam', 'server_time', 'language', 'message_overrides', 'privacy'],
} as const;

function viewRoute(summary: string, description: string) {
  return { tags, summary, description, params: tokenParam, response: { 200: phoneView, ...errors } } as const;
}

export const phoneViewSchema = viewRoute(
  'What the phone page shows',
  'The phone’s status and check, the next chunk’s sequence, the session’s status and time left.',
);

export const phoneLanguageSchema = {
  tags,
  summary: 'Pick the phone page’s language',
  description:
    'Remembers the candidate’s pick in the phone page’s language menu on the session, as PUT ' +
    '/api/room/:token/language does (the room then speaks it too). 422 for a language outside ' +
    '`language.available`.',
  params: tokenParam,
  body: languageChoice.body,
  response: { 200: languageChoice.answer, ...errors },
} as const;

export const phoneHelloSchema = {
  ...viewRoute('The phone page opened', 'The phone is paired (or back, after being lost).'),
  body: {
    type: ['object', 'null'],
    properties: {
      device: {
        type: 'string',
        maxLength: 120,
        description: 'The phone’s browser and system, e.g. "Chrome 131 on Android 14"',
      },
    },
  },
} as const;

export const phoneHeartbeatSchema = {
  ...viewRoute(
    'The phone is still there',
    'Sent every 5 seconds. `streaming` says whether the phone’s camera sends video now. A phone not heard ' +
      'from for 15 seconds is lost (during the exam an incident, mobile_lost; its return another, mobile_returned).',
  ),
  body: {
    type: ['object', 'null'],
    properties: {
      streaming: { type: 'boolean' },
      visible: { type: 'boolean', description: 'The page is in view' },
      battery_level: { type: ['number', 'null'], minimum: 0, maximum: 1 },
      charging: { type: ['boolean', 'null'] },
    },
  },
} as const;

export const phoneCheckSchema = {
  ...viewRoute(
    'The phone camera check',
    'Multipart `file`: a short clip from the phone’s camera (video/webm or video/mp4 by content, at least ' +
      '1 kB). Frames reached the server, so mobile_check becomes succeeded. Only before the exam starts.',
  ),
  consumes: ['multipart/form-data'],
  body: {
    type: 'object',
    properties: { file: { type: 'string', format: 'binary' } },
    required: ['file'],
  },
  response: {
    200: phoneView,
    ...errors,
    415: { description: 'The clip is no video/webm or video/mp4', ...errorBody },
  },
} as const;

export const phoneLeaveSchema = viewRoute(
  'The phone page is going away',
  'Sent as a beacon when the page is closed: the phone is lost at once (during the exam, an incident).',
);

export const phoneRecordingSchema = {
  ...roomRecordingSchema,
  summary: 'Append a chunk of the phone’s recording',
  description:
    'As the room’s recordings, for the third stream: multipart `file`, `sequence` and `source` (`mobile`, ' +
    'the only value taken here). 201 stored, 200 already stored, 409 naming the expected sequence.',
  params: tokenParam,
  body: {
    type: 'object',
    properties: {
      file: { type: 'string', format: 'binary' },
      sequence: {
        type: 'integer',
        minimum: 0,
        description: 'The chunk’s place in the phone’s recording, from 0',
      },
      source: { type: 'string', enum: ['mobile'], default: 'mobile' },
    },
    required: ['file', 'sequence'],
  },
} as const;
