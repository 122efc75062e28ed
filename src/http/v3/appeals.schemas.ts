import { APPEAL_DECISIONS, APPEAL_STATUSES, DECISION_COMMENT_MAX } from '../../domain/appeals/appeal.ts';
import {
  nullableInteger,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
} from './common.schemas.ts';

const appealRecord = {
  type: 'object',
  properties: {
    student_session_id: { type: 'integer' },
    status: { type: 'string', enum: APPEAL_STATUSES },
    statement: { type: 'string', description: "The candidate's statement" },
    submitted_at: nullableTime,
    decided_by: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, name: nullableString },
      description: 'The second reviewer; null while open',
    },
    decided_at: nullableTime,
    comment: { ...nullableString, description: "The second reviewer's comment" },
    appealed_verdict: { ...nullableString, description: 'The verdict appealed: suspicious or violation' },
    appealed_review_id: { type: 'integer', description: 'The history entry appealed' },
    decision_review_id: {
      ...nullableInteger,
      description: 'The history entry an overturned appeal recorded (verdict passed)',
    },
    files: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          file_name: { type: 'string' },
          content_type: { type: 'string' },
          size: { type: 'integer' },
          url: { ...nullableString, description: 'A download address, valid until expires_at' },
          expires_at: nullableTime,
        },
      },
    },
  },
} as const;

const tags = ['reviews'];
const one = { type: 'object', properties: { appeal: appealRecord } } as const;

export const showAppealSchema = showRouteSchema(
  {
    tags,
    summary: "Show a student session's appeal against its verdict",
    description:
      'Anyone who may see the session reads it (docs/appeals.md); 404 when the candidate made none.',
  },
  one,
);

export const putAppealSchema = updateRouteSchema(
  {
    tags,
    summary: 'Decide an appeal: upheld keeps the verdict, overturned records the verdict passed',
    description:
      'Reviewers and the exam managers, except the reviewer who gave the appealed verdict (422 naming ' +
      '`decision`). 409 once decided; 404 when there is no appeal.',
  },
  one,
  {
    type: 'object',
    properties: {
      ...signedParams,
      decision: { type: 'string', enum: APPEAL_DECISIONS },
      comment: { type: 'string', maxLength: DECISION_COMMENT_MAX },
    },
    required: ['decision', 'timestamp', 'nonce', 'signature'],
  },
);
