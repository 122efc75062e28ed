import { RECORDING_STATUSES } from '../../domain/recordings/recording.ts';
import { RECORDING_SOURCES } from '../../domain/room/room.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';

const tags = ['student sessions'];

/** One finalised recording of a session. */
export const recordingRecord = {
  type: 'object',
  properties: {
    source: {
      type: 'string',
      enum: [...RECORDING_SOURCES],
      description: 'webcam (camera and microphone), screen, or mobile (the phone camera: video only)',
    },
    status: { type: 'string', enum: [...RECORDING_STATUSES] },
    started_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The wall-clock moment of video time 0 (the session’s recording start)',
    },
    duration_seconds: { type: ['number', 'null'], description: 'Video time, gaps included' },
    gaps: {
      type: 'array',
      description: 'Stretches of video time (seconds) with nothing recorded, each longer than 5 s',
      items: {
        type: 'object',
        properties: { start: { type: 'number' }, end: { type: 'number' } },
      },
    },
    url: {
      type: 'string',
      format: 'uri',
      description:
        'Only when completed: the file (video/webm, or video/mp4 when the browser recorded MP4: Safari), byte ranges served',
    },
    expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'Only when completed: when `url` stops working',
    },
  },
} as const;

export const listRecordingsSchema = {
  tags,
  summary: 'List the finalised recordings of a student session',
  description:
    'The webcam, screen and phone (`mobile`, in exams with `mobile_cam`) recordings of a finished ' +
    'session, listed in that order, each assembled by a background job into one seekable WebM file ' +
    'whose time is the exam time, the same for every source (video time 0 is `started_at`; stretches ' +
    'without recording are kept as `gaps`). `status` moves `queued` → `processing` → `completed` or ' +
    '`failed`. A completed recording has a `url` that plays or downloads it without credentials for ' +
    "four hours (`expires_at`); it answers byte ranges, so a player can seek. It is always the service's " +
    'own `/files/...` address (the service decrypts what it stores). A session with no recording chunks lists none. Readable by whoever may read ' +
    "the session. 404 `Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope.",
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: { recordings: { type: 'array', items: recordingRecord } },
    },
    404: errorBody,
    ...commonErrors,
  },
} as const;
