import {
  emptyAnswer,
  epochSeconds,
  flagInput,
  notAuthorized,
  nullableInteger,
  nullableString,
  timeInput,
  v2Params,
  v2PathIds,
  v2SignedQuery,
} from './common.schemas.ts';
import { studentSessionRecordV2 } from './student-sessions.schemas.ts';
import { flagSettingsRecord } from '../v3/exams.schemas.ts';

const tags = ['v2'];

export const examRecordV2 = {
  type: 'object',
  properties: {
    exam_id: { type: 'integer' },
    name: { type: 'string' },
    start_time: epochSeconds,
    end_time: epochSeconds,
    duration: { ...nullableInteger, description: 'Minutes' },
    upload_exam: { type: 'boolean' },
    restrictions: { type: 'string', description: 'HTML: paragraphs and line breaks, other markup escaped' },
    type: { type: 'string', enum: ['demo', 'classroom', 'record_review', 'live_proctoring'] },
    mobile_cam: { type: 'boolean' },
    user_id: { type: 'integer' },
    institute_id: { type: 'integer' },
    for_reviewing: { type: 'boolean' },
    use_duration: { type: 'boolean' },
  },
} as const;

/** The exam fields a V2 create or update may carry (api.md's resource table, V2 names). */
const examFields = {
  name: { type: 'string' },
  duration: { type: 'integer', minimum: 1, description: 'Minutes' },
  type: { type: 'string', enum: ['demo', 'classroom', 'record_review', 'live_proctoring'] },
  start_time: timeInput,
  end_time: timeInput,
  mobile_cam: flagInput,
  for_reviewing: flagInput,
  use_duration: flagInput,
  upload_exam: flagInput,
  restrictions: { ...nullableString, description: 'Plain text; answered as HTML' },
  allow_websites: flagInput,
  allow_external_applications: flagInput,
  allow_textbooks: flagInput,
  allow_calculator: flagInput,
  allow_pen_paper: flagInput,
  allow_additional: flagInput,
  allowed_websites: { ...nullableString, description: 'Comma separated' },
  allowed_external_applications: { ...nullableString, description: 'Comma separated' },
  allowed_textbooks: { ...nullableString, description: 'Comma separated' },
  allowed_additional: { ...nullableString, description: 'Comma separated' },
  allowed_calculator_type: nullableString,
  // V2 writes go through V3's exam reader, so V3's other settings are taken too (V3 names; the V2
  // record does not show them, as api.md's V2 record has no such fields).
  status: { type: 'string', enum: ['draft', 'open', 'closed'], description: 'V3 setting; default open' },
  duration_minutes: { type: 'integer', minimum: 1, description: 'V3 name of duration (duration wins)' },
  upload_answers: { ...flagInput, description: 'V3 name of upload_exam (upload_exam wins)' },
  web_cam: { ...flagInput, description: 'V3 setting: students record their webcam' },
  screen_share: { ...flagInput, description: 'V3 setting: students share their screen' },
  global_proctoring: { ...flagInput, description: "V3 setting: the institute's proctors may proctor" },
  global_reviewing: { ...flagInput, description: "V3 setting: the institute's reviewers may review" },
  archived: { ...flagInput, description: 'V3 setting: a label for exams kept for the record' },
  live_id_check: {
    ...flagInput,
    description: 'V3 setting: a proctor admits each candidate after a live ID check',
  },
  automated_flags: { ...flagInput, description: 'V3 setting: the room runs the automated flags' },
  record_during_breaks: {
    ...flagInput,
    description: 'V3 setting: the streams keep recording during a rest break (default true)',
  },
  extra_time_beyond_end: {
    ...flagInput,
    description: "V3 setting: a student's extra time may run past end_time (default true)",
  },
  recording_quality: {
    type: 'string',
    enum: ['low', 'standard', 'high'],
    description: 'V3 setting: the recording profile’s level (default standard)',
  },
  flag_settings: {
    anyOf: [
      { type: 'object', properties: flagSettingsRecord.properties, additionalProperties: false },
      { type: 'string', description: 'The same object as JSON text' },
      { type: 'null' },
    ],
    description: 'V3 setting: the automated flags’ thresholds (docs/automated-flags.md)',
  },
  exam_language: { type: 'string', description: 'V3 setting: a supported BCP 47 tag' },
  candidate_languages: {
    anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }, { type: 'null' }],
    description: 'V3 setting: the languages a candidate may be shown; null for all',
  },
  timezone: { type: 'string', description: 'V3 setting: an IANA time zone name' },
  terms: { ...nullableString, description: 'V3 setting: terms the student accepts' },
} as const;

export const listExamsSchemaV2 = {
  tags,
  summary: 'V2: the exams the caller owns or co-manages',
  querystring: v2SignedQuery,
  response: {
    200: { type: 'object', properties: { exams: { type: 'array', items: examRecordV2 } } },
    403: notAuthorized,
  },
} as const;

export const showExamSchemaV2 = {
  tags,
  summary: 'V2: one exam (404 with an empty body when missing or out of scope)',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: { type: 'object', properties: { exam: examRecordV2 } },
    403: notAuthorized,
    404: emptyAnswer('No such exam, deleted, or outside the caller’s scope'),
  },
} as const;

export const createExamSchemaV2 = {
  tags,
  summary: 'V2: create an exam; answers 201 {"id": ID}',
  description: 'name, duration and type are required. Times are epoch seconds.',
  body: v2Params(examFields, ['name', 'duration', 'type']),
  response: {
    201: { type: 'object', properties: { id: { type: 'integer' } } },
    400: emptyAnswer('A required field is missing, or a value is invalid'),
    403: notAuthorized,
  },
} as const;

export const updateExamSchemaV2 = {
  tags,
  summary: 'V2: update an exam (every field optional); 200 with an empty body',
  params: v2PathIds('id'),
  body: v2Params(examFields),
  response: {
    200: emptyAnswer('Updated'),
    400: emptyAnswer('Invalid value, or no such exam in the caller’s scope'),
    403: notAuthorized,
  },
} as const;

export const destroyExamSchemaV2 = {
  tags,
  summary: 'V2: destroy an exam; 200 with an empty body',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: emptyAnswer('Destroyed'),
    400: emptyAnswer('No such exam in the caller’s scope (api.md: 400 on failure)'),
    403: notAuthorized,
  },
} as const;

export const sendEmailsSchemaV2 = {
  tags,
  summary: 'V2: send the exam emails; 200 {"student_sessions": [records with use_duration]}',
  description:
    'Emails the exam link to every student of the exam still registered and not yet emailed (the same ' +
    'action as V3 send_emails) and answers exactly those, each as the V2 student record plus ' +
    '`use_duration`; a second call answers `{"student_sessions": []}`.',
  params: v2PathIds('id'),
  body: v2Params({}),
  response: {
    200: {
      type: 'object',
      properties: {
        student_sessions: {
          type: 'array',
          items: {
            ...studentSessionRecordV2,
            properties: { ...studentSessionRecordV2.properties, use_duration: { type: 'boolean' } },
          },
        },
      },
    },
    403: notAuthorized,
    404: emptyAnswer('No such exam, deleted, or outside the caller’s scope'),
  },
} as const;
