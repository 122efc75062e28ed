import {
  commonErrors,
  emptyObject,
  errorBody,
  flag,
  idParam,
  listQuery,
  nullableInteger,
  nullableString,
  nullableTime,
  paginationHeaders,
  signedParams,
  signedQuery,
  v3Headers,
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
  },
} as const;

const tags = ['institutes'];
const one = { type: 'object', properties: { institute: instituteRecord } } as const;

export const listInstitutesSchema = {
  tags,
  summary: 'List institutes (superusers only)',
  description:
    'Filter/sort fields: id, name, short_name, callback_url, session_retention_period, default_language, ' +
    'created_at, updated_at.',
  headers: v3Headers,
  querystring: listQuery,
  response: {
    200: {
      headers: paginationHeaders,
      type: 'object',
      properties: { institutes: { type: 'array', items: instituteRecord } },
    },
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const showInstituteSchema = {
  tags,
  summary: 'Show an institute (its administrators and superusers)',
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: one, 404: errorBody, ...commonErrors },
} as const;

export const createInstituteSchema = {
  tags,
  summary: 'Create an institute (superusers only)',
  headers: v3Headers,
  body: { ...instituteInput, required: ['name', 'short_name', 'timestamp', 'nonce', 'signature'] },
  response: { 201: one, 422: errorBody, ...commonErrors },
} as const;

export const updateInstituteSchema = {
  tags,
  summary: 'Update an institute (its administrators and superusers)',
  headers: v3Headers,
  params: idParam(),
  body: instituteInput,
  response: { 200: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const destroyInstituteSchema = {
  tags,
  summary: 'Destroy an institute with all its data (superusers only)',
  description:
    'Users, exams and everything under them, tool providers, LTI resources and identity providers go in one ' +
    "transaction; stored files are removed after it. A superuser's own institute: 422.",
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: emptyObject, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;
