import { EXEMPT_CHECKS } from '../../domain/student-sessions/accommodations.ts';
import { SESSION_STATUSES } from '../../domain/student-sessions/status.ts';
import { LIVE_STATUSES } from '../../domain/live/live.ts';
import { CHECK_FIELDS } from '../../domain/student-sessions/student-session.ts';
import {
  commonErrors,
  errorBody,
  idParam,
  nullableInteger,
  nullableString,
  nullableTime,
  signedQuery,
  time,
  v3Headers,
} from './common.schemas.ts';

const check = {
  type: 'string',
  enum: ['not_started', 'not_completed', 'succeeded', 'failed', 'skipped'],
} as const;

/** Counts by status: one integer per status, and the total. */
export const statusCounts = {
  type: 'object',
  description: 'How many sessions (archived aside) are in each status, and in all',
  properties: Object.fromEntries([...SESSION_STATUSES, 'total'].map((name) => [name, { type: 'integer' }])),
} as const;

/** The student's accommodations as the monitor shows them (the student record's object). */
const monitorAccommodations = {
  type: ['object', 'null'],
  description:
    "The student's accommodations (docs/accommodations.md), as the student record has them; null when " +
    'the student has none',
  required: [
    'extra_time_minutes',
    'extra_time_percent',
    'breaks',
    'exemptions',
    'assistive_technology',
    'note',
  ],
  properties: {
    extra_time_minutes: { type: 'integer' },
    extra_time_percent: { type: 'integer' },
    breaks: {
      type: ['object', 'null'],
      required: ['count', 'minutes'],
      properties: { count: { type: 'integer' }, minutes: { type: 'integer' } },
    },
    exemptions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['check', 'reason'],
        properties: { check: { type: 'string', enum: [...EXEMPT_CHECKS] }, reason: { type: 'string' } },
      },
    },
    assistive_technology: { type: 'boolean' },
    note: nullableString,
  },
} as const;

/** One session as the monitor shows it (the `session` event's data, an item of `sessions`). */
export const monitorSession = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    attempt: { type: 'integer' },
    status: { type: 'string', enum: [...SESSION_STATUSES] },
    checks: {
      type: 'object',
      description: 'The requirement checks, by their student-record names',
      properties: Object.fromEntries(Object.values(CHECK_FIELDS).map((name) => [name, check])),
    },
    incidents_count: { type: 'integer' },
    proctor_id: nullableInteger,
    live_status: {
      type: 'string',
      enum: [...LIVE_STATUSES],
      description: "The candidate's live connection (docs/api-live.md)",
    },
    clock_paused: { type: 'boolean', description: "The proctor holds the candidate's clock still" },
    accommodations: monitorAccommodations,
    on_break: {
      type: 'boolean',
      description: 'The candidate is on a rest break (the exam clock stands still)',
    },
    break_ends_at: {
      ...nullableTime,
      description: 'When the running rest break ends by itself; null when none runs',
    },
    breaks_taken: { type: 'integer', description: 'How many rest breaks the candidate started' },
    updated_at: time,
  },
} as const;

const monitorView = {
  type: 'object',
  properties: {
    exam_id: { type: 'integer' },
    counts: statusCounts,
    sessions: { type: 'array', items: monitorSession, description: 'Archived sessions aside, by id' },
  },
} as const;

const STREAM_TEXT =
  'Server-sent events (docs/live-monitor.md). Each event is `id: CURSOR`, `event: NAME`, `data: JSON`. ' +
  '`snapshot` first ({exam_id, counts, sessions}); then `session` (one session, new or changed: status, ' +
  'checks, incidents, proctor, name, live status, paused clock, accommodations, rest break), `removed` ({id}: deleted or archived) and `counts` (the counts by ' +
  'status) as they happen, seen within about a second whichever process made the change; a `: heartbeat` ' +
  'comment every 15 s; `end` ({reason}: `reconnect`, `not_found`, `unavailable`, `too_slow`) before the ' +
  'server closes the stream. A reconnection gets a fresh snapshot.';

export const monitorSchema = {
  tags: ['exams'],
  summary: 'Live monitor of an exam: its sessions by status, as a stream of server-sent events',
  description:
    'With `Accept` naming `text/event-stream` as well as V3 (`application/vnd.procwise.v3, ' +
    'text/event-stream`), answers 200 `text/event-stream` and keeps the stream open: ' +
    STREAM_TEXT +
    ' Otherwise answers once, as JSON: `{"monitor": {exam_id, counts, sessions}}`, the snapshot the ' +
    'stream starts with. Anyone who may read the exam may watch it. Failures come before the stream ' +
    "starts, as JSON: 404 `Couldn't find Exam with 'id'=ID`, 503 while the database is unavailable. " +
    'The stream closes after 10 minutes (`end` with `reconnect`), so a client reconnects and access is ' +
    'checked again; it also ends when the exam is deleted or no longer readable (`not_found`).',
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: {
    200: {
      description: 'The snapshot as JSON, or the event stream',
      content: {
        'application/json': {
          schema: { type: 'object', properties: { monitor: monitorView } },
        },
        'text/event-stream': {
          schema: { type: 'string', description: STREAM_TEXT },
        },
      },
    },
    404: errorBody,
    ...commonErrors,
  },
} as const;
