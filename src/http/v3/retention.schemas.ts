import {
  PURGE_KINDS,
  RETENTION_DEFAULT_DAYS,
  RETENTION_KINDS,
  RETENTION_MAX_DAYS,
} from '../../domain/retention/retention.ts';
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

export const kindPurgeRecord = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: RETENTION_KINDS },
    rule: { type: 'string', enum: ['period', 'final_verdict'] },
    days: { ...nullableInteger, description: 'The period in force (days)' },
    purged_at: time,
    id_checked: { type: 'boolean', description: 'id_photo: a final verdict was recorded over the ID' },
    id_checked_by: { ...nullableInteger, description: 'The reviewer (a user id) of that verdict' },
    id_checked_by_name: nullableString,
    id_checked_at: nullableTime,
  },
} as const;

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
      description:
        'When the retention sweep removed the last of the session media (both photos, recordings, uploads)',
    },
    purged_kinds: {
      type: 'array',
      description: 'What retention purged of the session, kind by kind (docs/retention.md)',
      items: kindPurgeRecord,
    },
  },
} as const;

const kindText =
  'id_photo (the ID card photo), face_photo, recording (recordings and their chunks), ' +
  'upload (handed-in files and the exam document), incident (the written details of incidents and flags)';

export const retentionPolicyRecord = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: RETENTION_KINDS, description: kindText },
    days: {
      ...nullableInteger,
      description: 'Days after the session ended it is kept, as applied now; null: not purged by time',
    },
    setting: {
      ...nullableInteger,
      description: "The institute's own setting: days, or null to follow session_retention_period",
    },
    is_default: { type: 'boolean', description: 'The institute set nothing: default_days applies' },
    default_days: { ...nullableInteger, description: 'The default (null: follow session_retention_period)' },
    follows_session_period: { type: 'boolean' },
    after_final_verdict_hours: {
      ...nullableInteger,
      description: 'id_photo: it also goes this many hours after the verdict is final, whichever is first',
    },
    rule: { type: 'string', enum: ['period', 'final_verdict_or_period'] },
  },
} as const;

const defaultsText = RETENTION_KINDS.map((kind) => `${kind} ${RETENTION_DEFAULT_DAYS[kind] ?? 'null'}`).join(
  ', ',
);

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
      description: "The kind's retention period (days) applied",
    },
    rule: {
      ...nullableString,
      enum: ['period', 'final_verdict', null],
      description:
        'period (days after the end) or final_verdict (the ID photo); null before per-kind retention',
    },
    purged_at: time,
  },
} as const;

const tags = ['retention'];
const policies = {
  type: 'object',
  properties: { retention_policies: { type: 'array', items: retentionPolicyRecord } },
} as const;

export const showRetentionPoliciesSchema = showRouteSchema(
  {
    tags,
    summary: "Show an institute's retention per kind of session data (administrators)",
    description:
      `Defaults (days; null follows session_retention_period): ${defaultsText}. ` +
      'A legal hold keeps every kind. Superusers and administrators of the institute; other members 403.',
  },
  policies,
);

export const putRetentionPoliciesSchema = updateRouteSchema(
  {
    tags,
    summary: "Set an institute's retention per kind of session data (administrators)",
    description:
      'Send any of <kind>_days: whole days 1 to 36500 after the session ended, or null (or empty) to follow ' +
      'session_retention_period. Kinds not sent keep their setting. Audit-logged as the request.',
  },
  policies,
  {
    type: 'object',
    properties: {
      ...signedParams,
      ...Object.fromEntries(
        RETENTION_KINDS.map((kind) => [
          `${kind}_days`,
          { type: ['integer', 'null'], minimum: 1, maximum: RETENTION_MAX_DAYS, description: 'Days' },
        ]),
      ),
    },
    required: ['timestamp', 'nonce', 'signature'],
  },
);
const oneHold = { type: 'object', properties: { legal_hold: legalHoldRecord } } as const;
const purgeFields =
  'Filter/sort fields: id, institute_id, exam_id, student_session_id, kind, files, bytes, reason, rule, purged_at. ' +
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

export const showSessionRetentionSchema = showRouteSchema(
  {
    tags,
    summary: 'Show what retention purged of a student session, kind by kind',
    description:
      'Anyone who may read the session (the review shows "deleted on <date>" instead of a missing file). ' +
      'For id_photo it keeps that the ID was checked: by whom and when.',
  },
  { type: 'object', properties: { purged_kinds: { type: 'array', items: kindPurgeRecord } } },
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
