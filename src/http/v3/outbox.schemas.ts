import { OUTBOX_STATUS_FILTER_NAMES } from '../../domain/mail/outbox.ts';
import {
  commonErrors,
  errorBody,
  idParam,
  listQuery,
  listRouteSchema,
  nullableInteger,
  nullableString,
  nullableTime,
  signedParams,
  signedQuery,
  time,
  v3Headers,
} from './common.schemas.ts';

/**
 * Schemas of the outbox routes (docs/mail.md, "The outbox API"). They document the routes in the
 * OpenAPI document; the service checks every value itself.
 */

const STATUS_VALUES = ['pending', 'sending', 'sent', 'held', 'failed'] as const;

export const outboxSummaryRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: {
      ...nullableInteger,
      description: 'The institute the email belongs to; null for old mail no institute was found for',
    },
    kind: {
      type: 'string',
      description: 'exam_link, exam_finished, staff_invitation or password_reset',
    },
    to: { type: 'string', description: 'The recipient' },
    subject: { type: 'string' },
    status: {
      type: 'string',
      enum: STATUS_VALUES,
      description:
        'pending (waiting for delivery), sending (an attempt holds it), sent, held (no SMTP server ' +
        'where the worker ran), failed (refused for good, or every attempt failed)',
    },
    attempts: { type: 'integer', description: 'Delivery attempts so far' },
    last_error: { ...nullableString, description: 'Why the last attempt failed' },
    student_session_id: {
      ...nullableInteger,
      description: 'The student session the email is about, if any (null once the session is gone)',
    },
    created_at: time,
    sent_at: { ...nullableTime, description: 'When the SMTP server accepted it' },
    next_attempt_at: {
      ...time,
      description: 'pending: when it was written or released; sending: when the claim runs out',
    },
  },
} as const;

const outboxMessageRecord = {
  type: 'object',
  properties: {
    ...outboxSummaryRecord.properties,
    text: {
      type: 'string',
      description:
        'The plain-text body. The token of an invitation or password-reset link is shown as [hidden]',
    },
  },
} as const;

const tags = ['outbox'];
const one = { type: 'object', properties: { message: outboxMessageRecord } } as const;

const listed = listRouteSchema(
  {
    tags,
    summary: "List emails in the outbox (an administrator's institute; superusers all)",
    description:
      'Newest first unless sorted. Filter/sort fields: id, institute_id, kind, to, subject, status, ' +
      'attempts, student_session_id, created_at, sent_at. Other roles are refused (403).',
  },
  'messages',
  outboxSummaryRecord,
);

export const listOutboxSchema = {
  ...listed,
  querystring: {
    ...listQuery,
    properties: {
      ...listQuery.properties,
      status: {
        type: 'string',
        enum: [...OUTBOX_STATUS_FILTER_NAMES],
        description: 'Only emails in this status; queued means pending or sending',
      },
    },
  },
} as const;

export const showOutboxMessageSchema = {
  tags,
  summary: 'Show an email of the outbox with its text body',
  description:
    "404 `Couldn't find Email with 'id'=ID` for an id that names none, or one of another institute.",
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: one, 404: errorBody, ...commonErrors },
} as const;

export const redeliverOutboxMessageSchema = {
  tags,
  summary: 'Queue a held or failed email for delivery again',
  description:
    'The email goes back to pending, its error cleared, with a new delivery job; the worker sends it ' +
    '(or holds it again where no SMTP server is configured). An email in another status: 409.',
  headers: v3Headers,
  params: idParam(),
  body: { type: 'object', properties: { ...signedParams }, required: ['timestamp', 'nonce', 'signature'] },
  response: {
    200: { description: 'Queued', ...one },
    404: errorBody,
    409: { description: 'The email is not held or failed', ...errorBody },
    ...commonErrors,
  },
} as const;
