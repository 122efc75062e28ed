import { PURGE_KINDS } from '../../domain/retention/retention.ts';
import {
  idParam,
  listRouteSchema,
  nullableInteger,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  time,
  updateRouteSchema,
} from './common.schemas.ts';

export const legalHoldRecord = {
  type: 'object',
  properties: {
    student_session_id: { type: 'integer' },
    held: { type: 'boolean', description: 'True while the session is kept past retention' },
    reason: { ...nullableString, description: 'The reason given with the last set or clear' },
    set_by: { ...nullableInteger, description: 'The user who last set or cleared the hold (null: never)' },
    set_at: { ...nullableTime, description: 'When the hold was last set or cleared (null: never)' },
    media_purged_at: {
      ...nullableTime,
      description: "When the retention sweep removed the session's recordings, photos and uploads",
    },
  },
} as const;

export const purgeRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    exam_id: { type: 'integer' },
    student_session_id: { type: 'integer' },
    kind: {
      type: 'string',
      enum: PURGE_KINDS,
      description:
        'recording (finalised files), recording_chunk (webcam and screen chunks), photo (ID card, face), ' +
        'upload (handed-in files and the exam document)',
    },
    files: { type: 'integer', description: 'Stored files removed' },
    bytes: { type: 'integer', description: 'Their size in all' },
    reason: { type: 'string', enum: ['retention'] },
    retention_period: {
      ...nullableInteger,
      description: "The institute's session_retention_period (days) applied",
    },
    purged_at: time,
  },
} as const;

const tags = ['retention'];
const oneHold = { type: 'object', properties: { legal_hold: legalHoldRecord } } as const;
const purgeFields =
  'Filter/sort fields: id, institute_id, exam_id, student_session_id, kind, files, bytes, reason, purged_at. ' +
  'Without a sort, the newest entry comes first.';

export const showLegalHoldSchema = showRouteSchema(
  {
    tags,
    summary: "Show a student session's legal hold (administrators)",
    description: 'Superusers and administrators of the institute; other roles that see the session: 403.',
  },
  oneHold,
);

export const putLegalHoldSchema = updateRouteSchema(
  {
    tags,
    summary: "Set or clear a student session's legal hold (administrators)",
    description:
      "A held session keeps its recordings, photos and uploads past the institute's session_retention_period " +
      '(docs/retention.md). Audit-logged (legal_hold_set, legal_hold_cleared).',
  },
  oneHold,
  {
    type: 'object',
    properties: {
      ...signedParams,
      hold: { type: 'boolean', description: 'true sets the hold, false clears it' },
      reason: { type: 'string', maxLength: 1000, description: 'Why (a case number, say)' },
    },
    required: ['hold', 'timestamp', 'nonce', 'signature'],
  },
);

export const listSessionPurgesSchema = listRouteSchema(
  {
    tags,
    summary: 'List what retention purged of a student session (administrators)',
    description: purgeFields,
  },
  'purges',
  purgeRecord,
  idParam(),
);

export const listPurgesSchema = listRouteSchema(
  {
    tags,
    summary: "List the purge log: media removed by retention (an administrator's institute; superusers all)",
    description: `${purgeFields} Other roles are refused (403).`,
  },
  'purges',
  purgeRecord,
);
