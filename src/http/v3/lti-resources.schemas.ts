import {
  commonErrors,
  destroyRouteSchema,
  errorBody,
  idParam,
  listRouteSchema,
  nullableInteger,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
  v3Headers,
} from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

export const ltiResourceRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer', description: "The tool provider's institute" },
    tool_provider_id: { type: 'integer' },
    exam_id: { ...nullableInteger, description: 'The exam it launches into, or null' },
    resource_link_id: { type: 'string', description: 'Unique per tool provider' },
    context_id: nullableString,
    title: nullableString,
    created_at: nullableTime,
    updated_at: nullableTime,
  },
} as const;

const ltiResourceInput = {
  type: 'object',
  properties: {
    ...signedParams,
    tool_provider_id: {
      type: 'integer',
      description: 'A tool provider the caller manages; sets the institute',
    },
    resource_link_id: { type: 'string' },
    exam_id: { type: ['integer', 'null'], description: "An exam of the provider's institute; null unlinks" },
    context_id: { type: 'string' },
    title: { type: 'string' },
  },
} as const;

const tags = ['lti resources'];
const one = { type: 'object', properties: { lti_resource: ltiResourceRecord } } as const;

export const listLtiResourcesSchema = listRouteSchema(
  {
    tags,
    summary: 'List LTI resources',
    description:
      "The caller's institute's (a superuser: every institute's). Administrators, teachers and auditors. " +
      'Filter/sort fields: id, institute_id, tool_provider_id, exam_id, resource_link_id, context_id, title, ' +
      'created_at, updated_at.',
  },
  'lti_resources',
  ltiResourceRecord,
);

export const showLtiResourceSchema = showRouteSchema({ tags, summary: 'Show an LTI resource' }, one);

export const createLtiResourceSchema = {
  tags,
  summary: 'Create an LTI resource (administrators)',
  headers: v3Headers,
  body: {
    ...ltiResourceInput,
    required: ['tool_provider_id', 'resource_link_id', 'timestamp', 'nonce', 'signature'],
  },
  response: { 201: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const updateLtiResourceSchema = updateRouteSchema(
  { tags, summary: 'Update an LTI resource (administrators)' },
  one,
  ltiResourceInput,
);

export const destroyLtiResourceSchema = destroyRouteSchema({
  tags,
  summary: 'Destroy an LTI resource (sessions that came through it keep their LMS ids)',
});

export const showLtiStudentSchema = {
  tags: ['student sessions', ...tags],
  summary: 'Show the student session an LMS knows by its user id and resource link',
  description:
    'The latest attempt of the exam with these LMS ids (one not archived first). 404 ' +
    "`Couldn't find Student Session with 'id'=LMSID and 'resource_link_id'=RLID` when there is none.",
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: {
      ...signedParams,
      student_lms_id: { type: 'string' },
      resource_link_id: { type: 'string' },
      context_id: { type: 'string', description: 'Optional; when sent, the session must have it too' },
    },
    required: ['student_lms_id', 'resource_link_id', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    200: { type: 'object', properties: { student: studentRecord } },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
