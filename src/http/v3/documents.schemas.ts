import {
  commonErrors,
  emptyObject,
  errorBody,
  listQuery,
  paginationHeaders,
  signedParams,
  signedQuery,
  v3Headers,
} from './common.schemas.ts';

/** Path parameters that are all required integer ids (`exam_id`, `document_id`, `id`). */
export function pathIds(...names: readonly string[]) {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((name) => [name, { type: 'integer' }])),
    required: [...names],
  } as const;
}

const time = { type: 'string', format: 'date-time' } as const;

export const documentRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    exam_id: { type: 'integer' },
    exam_content: { type: 'string', description: 'Instruction text for students; may hold [attachment:ID]' },
    attachments_count: { type: 'integer', description: 'How many files are attached (beyond the contract)' },
    created_at: time,
    updated_at: { ...time, description: 'Moves when exam_content changes' },
  },
} as const;

const documentInput = {
  type: 'object',
  properties: { ...signedParams, exam_content: { type: 'string', minLength: 1 } },
  required: ['exam_content', 'timestamp', 'nonce', 'signature'],
} as const;

const tags = ['documents'];
const one = { type: 'object', properties: { document: documentRecord } } as const;

export const listDocumentsSchema = {
  tags,
  summary: 'List the documents of an exam (at most one)',
  description: 'Filter/sort fields: id, created_at, updated_at.',
  headers: v3Headers,
  params: pathIds('exam_id'),
  querystring: listQuery,
  response: {
    200: {
      headers: paginationHeaders,
      type: 'object',
      properties: { documents: { type: 'array', items: documentRecord } },
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const showDocumentSchema = {
  tags,
  summary: 'Show a document',
  headers: v3Headers,
  params: pathIds('exam_id', 'id'),
  querystring: signedQuery,
  response: { 200: one, 404: errorBody, ...commonErrors },
} as const;

export const createDocumentSchema = {
  tags,
  summary: "Create the exam's document",
  description:
    "An exam has at most one document: a second create answers 422 'exam_id':['has already been taken'].",
  headers: v3Headers,
  params: pathIds('exam_id'),
  body: documentInput,
  response: { 201: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const updateDocumentSchema = {
  tags,
  summary: 'Update a document (exam_content is required)',
  headers: v3Headers,
  params: pathIds('exam_id', 'id'),
  body: documentInput,
  response: { 200: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const destroyDocumentSchema = {
  tags,
  summary: 'Destroy a document with its attachments and their files',
  headers: v3Headers,
  params: pathIds('exam_id', 'id'),
  querystring: signedQuery,
  response: { 200: emptyObject, 404: errorBody, ...commonErrors },
} as const;
