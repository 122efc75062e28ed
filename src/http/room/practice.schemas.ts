/**
 * OpenAPI descriptions of the practice run's routes (docs/practice.md). They document; the domain
 * validates. Like the room, they are not signed: the room token in the path is the only credential.
 */

import {
  PRACTICE_CHECKS,
  PRACTICE_MAX_CHUNKS,
  PRACTICE_OUTCOMES,
  PRACTICE_SOURCES,
} from '../../domain/practice/practice.ts';
import { commonErrors, errorBody } from '../v3/common.schemas.ts';

const tags = ['practice run'];

const tokenParam = {
  type: 'object',
  properties: { token: { type: 'string', description: 'The session’s room token (32 hex characters)' } },
  required: ['token'],
} as const;

const runParams = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'The session’s room token (32 hex characters)' },
    run: { type: 'string', description: 'The practice run’s id, as `POST practice` answered it' },
  },
  required: ['token', 'run'],
} as const;

const time = { type: ['string', 'null'], format: 'date-time' } as const;
const check = { type: 'string', enum: [...PRACTICE_CHECKS] } as const;
const outcome = { type: 'string', enum: [...PRACTICE_OUTCOMES] } as const;

/** A practice run as the page reads it. */
const practiceRun = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    status: { type: 'string', enum: ['running', 'passed', 'failed'] },
    failed_check: {
      type: ['string', 'null'],
      description: 'The first required check that did not succeed (`unfinished` for an abandoned run)',
    },
    required_checks: {
      type: 'array',
      items: check,
      description:
        'What this student’s run must pass: the exam’s required checks (exemptions applied), ' +
        'the ID and face photos when the exam records the webcam, a recording of each stream',
    },
    checks: {
      type: 'object',
      description: 'What each check gave so far',
      additionalProperties: outcome,
      example: { webcam: 'succeeded', microphone: 'succeeded' },
    },
    sources: { type: 'array', items: { type: 'string', enum: [...PRACTICE_SOURCES] } },
    recording_seconds: { type: 'integer', description: 'How long the page records each stream' },
    recorded_seconds: {
      type: 'object',
      description: 'Seconds each stream’s practice recording finalised to (once the run ended)',
      additionalProperties: { type: 'number' },
      example: { webcam: 29.9, screen: 30 },
    },
    started_at: time,
    finished_at: time,
  },
  required: [
    'id',
    'status',
    'failed_check',
    'required_checks',
    'checks',
    'sources',
    'recording_seconds',
    'recorded_seconds',
    'started_at',
    'finished_at',
  ],
} as const;

const runAnswer = {
  type: 'object',
  properties: { practice_run: practiceRun },
  required: ['practice_run'],
} as const;

const writeErrors = {
  ...commonErrors,
  404: { description: 'No session has this token, or no run of it this id', ...errorBody },
  409: {
    description: 'The exam has started or ended, or the run has ended',
    ...errorBody,
  },
  422: { description: 'A parameter is missing or invalid', ...errorBody },
} as const;

export const practiceBeginSchema = {
  tags,
  summary: 'Begin a practice run',
  description:
    'Begins a practice run of the exam’s technical setup (docs/practice.md): the session’s ' +
    '`practice_status` becomes `running`; its `status` never changes. Any session before exam_started ' +
    'may practise; 409 once the exam has started or ended. An earlier run still running ends as failed ' +
    '(`unfinished`), its files removed.',
  params: tokenParam,
  response: { 201: runAnswer, ...writeErrors },
} as const;

export const practiceViewSchema = {
  tags,
  summary: 'A practice run',
  description: 'The run with what each check gave so far.',
  params: runParams,
  response: { 200: runAnswer, ...writeErrors },
} as const;

export const practiceChecksSchema = {
  tags,
  summary: 'Record what the practice checks gave',
  description:
    'Any of the page’s checks, each `succeeded`, `failed` or `skipped` (the recordings are judged by ' +
    'the server at the end). Only while the run is running.',
  params: runParams,
  body: {
    type: 'object',
    properties: Object.fromEntries(
      PRACTICE_CHECKS.filter((name) => !name.endsWith('_recording')).map((name) => [name, outcome]),
    ),
  },
  response: { 200: runAnswer, ...writeErrors },
} as const;

export const practicePhotoSchema = {
  tags,
  summary: 'Try a practice photo',
  description:
    'Multipart field `file`, an image by content (415 otherwise): it proves a photo can be taken and is ' +
    'discarded, never kept.',
  consumes: ['multipart/form-data'],
  params: runParams,
  body: {
    type: 'object',
    properties: { file: { type: 'string', format: 'binary' } },
    required: ['file'],
  },
  response: {
    200: runAnswer,
    415: { description: 'The file is no image', ...errorBody },
    ...writeErrors,
  },
} as const;

export const practiceRecordingSchema = {
  tags,
  summary: 'Append a practice recording chunk',
  description:
    'Multipart `file`, `sequence` (0, 1, 2, ...) and `source` (`webcam`, the default, or `screen`), as ' +
    'the room’s recording chunks. 201 when stored, 200 for a sequence already stored; 409 naming the ' +
    'expected sequence for a gap. The chunks wait in the storage until the run ends, then are removed: ' +
    `never kept as the session’s recordings. At most ${PRACTICE_MAX_CHUNKS} chunks a stream.`,
  consumes: ['multipart/form-data'],
  params: runParams,
  body: {
    type: 'object',
    properties: {
      file: { type: 'string', format: 'binary' },
      sequence: { type: 'integer', minimum: 0, maximum: PRACTICE_MAX_CHUNKS - 1 },
      source: { type: 'string', enum: [...PRACTICE_SOURCES], default: 'webcam' },
    },
    required: ['file', 'sequence'],
  },
  response: {
    200: { type: 'object', properties: { next_sequence: { type: 'integer' } } },
    201: { type: 'object', properties: { next_sequence: { type: 'integer' } } },
    413: { description: 'Chunk too large, or the run stored too much', ...errorBody },
    415: { description: 'The first chunk is no video/webm or video/mp4', ...errorBody },
    ...writeErrors,
  },
} as const;

export const practiceFinishSchema = {
  tags,
  summary: 'End a practice run',
  description:
    'Finalises each stream’s chunks into one recording as the exam does, requires it to play (at least ' +
    'a few seconds), deletes every file, and answers the verdict: `passed`, or `failed` with the first ' +
    'required check that did not succeed in `failed_check`. The session’s practice_status follows.',
  params: runParams,
  response: { 200: runAnswer, ...writeErrors },
} as const;

export const practiceVisitorSchema = {
  tags,
  summary: 'Begin a visitor’s practice of a demo exam',
  description:
    'The public practice link of a `demo` exam (the V3 exam’s `practice_url`): makes a throwaway ' +
    'session for the visitor (in no list, removed when its run ends or within hours) and answers its ' +
    'token, to use with the practice routes. 404 for a link that names no open demo exam; 409 when too ' +
    'many visitors practise at once. Rate-limited per link.',
  params: {
    type: 'object',
    properties: {
      key: { type: 'string', description: 'The link’s key: the exam id, a dot and a signature' },
    },
    required: ['key'],
  },
  response: {
    201: {
      type: 'object',
      properties: { token: { type: 'string', description: 'The visitor session’s room token' } },
      required: ['token'],
    },
    ...commonErrors,
    404: { description: 'No open demo exam has this link', ...errorBody },
    409: { description: 'Too many visitors at once', ...errorBody },
  },
} as const;
