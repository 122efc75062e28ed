import { DELIVERY_STATES } from '../../domain/mail/outbox.ts';
import {
  commonErrors,
  errorBody,
  idParam,
  nullableString,
  nullableTime,
  signedParams,
  time,
  v3Headers,
} from './common.schemas.ts';

const STATUS_VALUES = ['pending', 'sending', 'sent', 'held', 'failed'] as const;

const countsRecord = {
  type: 'object',
  description:
    "Unarchived sessions by the delivery of their newest exam-link email (sessions never emailed aren't counted)",
  properties: Object.fromEntries(DELIVERY_STATES.map((state) => [state, { type: 'integer' }])) as Record<
    (typeof DELIVERY_STATES)[number],
    { type: 'integer' }
  >,
  required: [...DELIVERY_STATES],
} as const;

const emailRecord = {
  type: ['object', 'null'],
  description: 'The newest exam-link email of the session; null when none was written',
  properties: {
    outbox_id: { type: 'integer' },
    delivery: {
      type: 'string',
      enum: DELIVERY_STATES,
      description: 'queued (pending or sending), delivered (sent), held (no SMTP server), failed',
    },
    status: { type: 'string', enum: STATUS_VALUES, description: "The outbox row's own status" },
    last_error: { ...nullableString, description: 'Why the last attempt failed' },
    created_at: time,
    sent_at: { ...nullableTime, description: 'When the SMTP server accepted it' },
  },
  required: ['outbox_id', 'delivery', 'status', 'last_error', 'created_at', 'sent_at'],
} as const;

export const emailDeliveriesSchema = {
  tags: ['exams'],
  summary: "The delivery of an exam's exam-link emails, and its students' room links",
  description:
    "Read from the outbox, for the console's students screen: counts by delivery state over the " +
    "exam's unarchived sessions, and for each session of the exam that `student_session_ids` names " +
    '(comma-separated, at most 300; others are left out) its room link and its newest exam-link email. ' +
    "`mail_server_configured` says whether this process has SMTP_URL. Anyone who may read the exam's " +
    "student sessions may read this. 404 `Couldn't find Exam with 'id'=ID`; 422 for a bad " +
    '`student_session_ids`.',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: {
      ...signedParams,
      student_session_ids: { type: 'string', description: 'Comma-separated ids of sessions of the exam' },
    },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: {
        mail_server_configured: { type: 'boolean' },
        counts: countsRecord,
        students: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              student_session_id: { type: 'integer' },
              room_url: {
                type: 'string',
                description: "{PUBLIC_URL}/room/<token>: the student's credential",
              },
              email: emailRecord,
            },
            required: ['student_session_id', 'room_url', 'email'],
          },
        },
      },
      required: ['mail_server_configured', 'counts', 'students'],
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
