import { VERDICTS } from '../../domain/reviews/review.ts';
import {
  idParam,
  listQuery,
  listRouteSchema,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
} from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

const verdict = { type: 'string', enum: VERDICTS } as const;
const secondReviewState = {
  type: 'string',
  enum: ['not_required', 'pending', 'confirmed'],
  description: 'pending: a violation waiting for a second, different reviewer',
} as const;
const reviewer = {
  type: ['object', 'null'],
  properties: { id: { type: 'integer' }, name: nullableString },
} as const;

const reviewEntry = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    verdict,
    comment: nullableString,
    reviewer,
    reviewed_at: nullableTime,
    second_review: secondReviewState,
  },
} as const;

export const reviewRecord = {
  type: 'object',
  properties: {
    student_session_id: { type: 'integer' },
    verdict: { ...verdict, description: 'The newest verdict recorded (not_reviewed before any)' },
    comment: nullableString,
    reviewer,
    reviewed_at: nullableTime,
    confirmed: { type: 'boolean', description: 'False while a violation waits for its second reviewer' },
    reviewed: {
      type: 'string',
      description: "What the session's reviewed field shows (in_review while pending)",
    },
    second_review: {
      type: 'object',
      properties: {
        required: { type: 'boolean', description: "The institute's second_review_required setting" },
        status: secondReviewState,
        first_reviewer: reviewer,
        confirmed_by: reviewer,
        confirmed_at: nullableTime,
      },
    },
    history: { type: 'array', items: reviewEntry, description: 'Every verdict recorded, oldest first' },
  },
} as const;

const queueRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer', description: 'The student session' },
    name: { type: 'string' },
    email: { type: 'string' },
    attempt: { type: 'integer' },
    start_time: nullableTime,
    end_time: nullableTime,
    incidents_count: { type: 'integer' },
    suspicion_score: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      description:
        'From the undismissed automated flags: weight of the type × confidence × duration factor, summed, ' +
        'at most 100 (docs/automated-flags.md). 0 without flags',
    },
    verdict: { type: 'string' },
    confirmed: { type: 'boolean' },
    second_review: secondReviewState,
    reviewed: { type: 'string' },
    comment: nullableString,
    reviewer,
    reviewed_at: nullableTime,
    appeal_status: {
      type: 'string',
      enum: ['none', 'open', 'upheld', 'overturned'],
      description: "The candidate's appeal (docs/appeals.md); open appeals come first in the default order",
    },
  },
} as const;

const tags = ['reviews'];
const one = { type: 'object', properties: { review: reviewRecord } } as const;

export const showReviewSchema = showRouteSchema(
  {
    tags,
    summary: "Show a student session's review: verdict, second review and history",
    description: 'Anyone who may see the session reads it (docs/review.md).',
  },
  one,
);

export const putReviewSchema = updateRouteSchema(
  {
    tags,
    summary: 'Record a verdict on a student session (reviewers and the exam managers)',
    description:
      'Adds an entry to the history. With the institute setting second_review_required, a violation waits ' +
      'for a different reviewer to confirm (PUT violation) or change it; confirming your own is 403.',
  },
  one,
  {
    type: 'object',
    properties: {
      ...signedParams,
      verdict,
      comment: { type: 'string', maxLength: 10_000 },
    },
    required: ['verdict', 'timestamp', 'nonce', 'signature'],
  },
);

export const reviewableSchema = showRouteSchema(
  {
    tags,
    summary: 'Show the student session with this room token, for a reviewer who may review it (compat)',
    description:
      'The route parameter is named `id`, as in the original service, but holds the session’s room token ' +
      '(the 32 hex characters of the room link); it is signed as `id=<token>`. Anyone else: 404.',
  },
  { type: 'object', properties: { student: studentRecord } },
  {
    type: 'object',
    properties: { id: { type: 'string', description: 'The session’s room token (not its numeric id)' } },
    required: ['id'],
  },
);

const queueList = listRouteSchema(
  {
    tags,
    summary: "An exam's review queue: its finished sessions with verdict, incident count and suspicion score",
    description:
      'Default order: open appeals first, then suspicion_score descending, then incidents_count descending, then id. Filter/sort ' +
      'fields: id, name, email, attempt, start_time, end_time, incidents_count, suspicion_score, verdict, ' +
      'second_review, reviewed, reviewer_id, reviewed_at, appeal_status, appeal_open (1 while an appeal is open). ' +
      'verdict=passed,suspicious is a shortcut for a verdict filter.',
  },
  'review_queue',
  queueRecord,
  idParam('exam_id'),
);

export const reviewQueueSchema = {
  ...queueList,
  querystring: {
    ...listQuery,
    properties: {
      ...listQuery.properties,
      verdict: { type: 'string', description: 'One verdict, or several separated by commas' },
    },
  },
} as const;
