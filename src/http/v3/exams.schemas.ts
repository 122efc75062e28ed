import {
  createRouteSchema,
  destroyRouteSchema,
  flag,
  listRouteSchema,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
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

export const listExamsSchema = listRouteSchema(
  {
    tags,
    summary: 'List exams',
    description:
      'Filter/sort fields: id, name, type, status, user_id, duration_minutes, start_time, end_time, created_at, updated_at. ' +
      'Deleted exams appear only when filtering on status. `like` applies to the text fields (name, type, status) only. ' +
      'Time operands take the same forms as time inputs, years 0000 to 9999. In a sort, null sorts after every value ' +
      '(last ascending, first descending) on both databases.',
  },
  'exams',
  examRecord,
);

export const showExamSchema = showRouteSchema({ tags, summary: 'Show an exam' }, one);

export const createExamSchema = createRouteSchema({ tags, summary: 'Create an exam' }, one, {
  ...examInput,
  required: ['name', 'type', 'timestamp', 'nonce', 'signature'],
});

export const updateExamSchema = updateRouteSchema({ tags, summary: 'Update an exam' }, one, examInput);

export const destroyExamSchema = destroyRouteSchema({
  tags,
  summary: 'Destroy an exam (its status becomes deleted)',
});
