import {
  commonErrors,
  emptyObject,
  errorBody,
  idParam,
  listQuery,
  paginationHeaders,
  signedParams,
  signedQuery,
  v3Headers,
  nullableString,
  nullableTime,
  flag,
} from './common.schemas.ts';

export const examRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    user_id: { type: 'integer' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['demo', 'classroom', 'record_review', 'live_proctoring'] },
    status: { type: 'string', enum: ['draft', 'open', 'closed', 'deleted'] },
    duration_minutes: { type: ['integer', 'null'] },
    use_duration: flag,
    start_time: nullableTime,
    end_time: nullableTime,
    mobile_cam: flag,
    web_cam: flag,
    screen_share: flag,
    for_reviewing: flag,
    upload_answers: flag,
    restrictions: nullableString,
    allow_websites: flag,
    allow_external_applications: flag,
    allow_textbooks: flag,
    allow_calculator: flag,
    allow_pen_paper: flag,
    allow_additional: flag,
    allowed_websites: nullableString,
    allowed_external_applications: nullableString,
    allowed_textbooks: nullableString,
    allowed_calculator_type: nullableString,
    allowed_additional: nullableString,
    comanager_ids: { type: 'array', items: { type: 'integer' } },
    created_at: nullableTime,
    updated_at: nullableTime,
  },
} as const;

const examInput = {
  type: 'object',
  properties: {
    ...signedParams,
    name: { type: 'string' },
    type: examRecord.properties.type,
    status: { type: 'string', enum: ['draft', 'open', 'closed'], default: 'open' },
    duration_minutes: {
      type: 'integer',
      minimum: 1,
      description: 'Required when use_duration is true. Alias: duration',
    },
    use_duration: { type: 'boolean', default: true },
    start_time: { type: 'string', description: 'ISO 8601, a date, or epoch seconds/milliseconds' },
    end_time: { type: 'string', description: 'ISO 8601, a date, or epoch seconds/milliseconds' },
    upload_answers: { type: 'boolean', description: 'Alias: upload_exam' },
    restrictions: { type: 'string' },
  },
} as const;

const tags = ['exams'];
const one = { type: 'object', properties: { exam: examRecord } } as const;

export const listExamsSchema = {
  tags,
  summary: 'List exams',
  description:
    'Filter/sort fields: id, name, type, status, user_id, duration_minutes, start_time, end_time, created_at, updated_at. ' +
    'Deleted exams appear only when filtering on status. `like` applies to the text fields (name, type, status) only. ' +
    'Time operands take the same forms as time inputs, years 0000 to 9999. In a sort, null sorts after every value ' +
    '(last ascending, first descending) on both databases.',
  headers: v3Headers,
  querystring: listQuery,
  response: {
    200: {
      headers: paginationHeaders,
      type: 'object',
      properties: { exams: { type: 'array', items: examRecord } },
    },
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const showExamSchema = {
  tags,
  summary: 'Show an exam',
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: one, 404: errorBody, ...commonErrors },
} as const;

export const createExamSchema = {
  tags,
  summary: 'Create an exam',
  headers: v3Headers,
  body: { ...examInput, required: ['name', 'type', 'timestamp', 'nonce', 'signature'] },
  response: { 201: one, 422: errorBody, ...commonErrors },
} as const;

export const updateExamSchema = {
  tags,
  summary: 'Update an exam',
  headers: v3Headers,
  params: idParam(),
  body: examInput,
  response: { 200: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const destroyExamSchema = {
  tags,
  summary: 'Destroy an exam (its status becomes deleted)',
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: emptyObject, 404: errorBody, ...commonErrors },
} as const;
