import {
  createRouteSchema,
  destroyRouteSchema,
  flag,
  listRouteSchema,
  nullableInteger,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
} from './common.schemas.ts';

export const instituteRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string', description: 'Unique' },
    short_name: { type: 'string' },
    callback_url: { ...nullableString, description: 'An http(s) address' },
    check_requirements_emails_enabled: flag,
    reminder_emails_enabled: flag,
    exam_link_emails_enabled: flag,
    exam_changed_emails_enabled: flag,
    exam_finalized_emails_enabled: flag,
    session_retention_period: { ...nullableInteger, description: 'Days; null keeps sessions' },
    default_language: { type: 'string', description: 'A language tag such as en or de-CH' },
    require_second_factor_for_administrators: {
      ...flag,
      description: 'Administrators must enrol and use a second factor (TOTP) to use the console',
    },
    second_review_required: {
      ...flag,
      description:
        'A violation verdict waits for a second, different reviewer to confirm it (docs/review.md)',
    },
    privacy_contact: {
      ...nullableString,
      description: "How candidates reach the institute about their data (the room's privacy panel shows it)",
    },
    dpo_name: { ...nullableString, description: 'The data protection officer' },
    dpo_email: { ...nullableString, description: "The data protection officer's email address" },
    appeal_period_days: {
      type: 'integer',
      description: 'Days after a final suspicious or violation verdict in which the candidate may contest it',
    },
    created_at: nullableTime,
    updated_at: nullableTime,
  },
} as const;

const instituteInput = {
  type: 'object',
  properties: {
    ...signedParams,
    name: { type: 'string', minLength: 1 },
    short_name: { type: 'string', minLength: 1 },
    callback_url: { type: ['string', 'null'], format: 'uri' },
    check_requirements_emails_enabled: { type: 'boolean', default: true },
    reminder_emails_enabled: { type: 'boolean', default: true },
    exam_link_emails_enabled: { type: 'boolean', default: true },
    exam_changed_emails_enabled: { type: 'boolean', default: true },
    exam_finalized_emails_enabled: { type: 'boolean', default: true },
    session_retention_period: { type: ['integer', 'null'], minimum: 1, description: 'Days' },
    default_language: { type: 'string', default: 'en' },
    require_second_factor_for_administrators: { type: 'boolean', default: false },
    second_review_required: { type: 'boolean', default: false },
    privacy_contact: { type: ['string', 'null'], maxLength: 500, description: 'Blank or null clears it' },
    dpo_name: { type: ['string', 'null'], maxLength: 500 },
    dpo_email: { type: ['string', 'null'], maxLength: 500, description: 'An email address' },
    appeal_period_days: { type: 'integer', minimum: 0, maximum: 365, default: 14, description: 'Days' },
  },
} as const;

const tags = ['institutes'];
const one = { type: 'object', properties: { institute: instituteRecord } } as const;

export const listInstitutesSchema = listRouteSchema(
  {
    tags,
    summary: 'List institutes (superusers only)',
    description:
      'Filter/sort fields: id, name, short_name, callback_url, session_retention_period, default_language, ' +
      'created_at, updated_at.',
  },
  'institutes',
  instituteRecord,
);

export const showInstituteSchema = showRouteSchema(
  { tags, summary: 'Show an institute (its administrators and superusers)' },
  one,
);

export const createInstituteSchema = createRouteSchema(
  { tags, summary: 'Create an institute (superusers only)' },
  one,
  { ...instituteInput, required: ['name', 'short_name', 'timestamp', 'nonce', 'signature'] },
);

export const updateInstituteSchema = updateRouteSchema(
  { tags, summary: 'Update an institute (its administrators and superusers)' },
  one,
  instituteInput,
);

export const destroyInstituteSchema = destroyRouteSchema(
  {
    tags,
    summary: 'Destroy an institute with all its data (superusers only)',
    description:
      'Users, exams and everything under them, tool providers, LTI resources and identity providers go in one ' +
      "transaction; stored files are removed after it. A superuser's own institute: 422.",
  },
  { refusable: true },
);
