import {
  createRouteSchema,
  destroyRouteSchema,
  listRouteSchema,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
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

export const listDocumentsSchema = listRouteSchema(
  {
    tags,
    summary: 'List the documents of an exam (at most one)',
    description: 'Filter/sort fields: id, created_at, updated_at.',
  },
  'documents',
  documentRecord,
  pathIds('exam_id'),
);

export const showDocumentSchema = showRouteSchema(
  { tags, summary: 'Show a document' },
  one,
  pathIds('exam_id', 'id'),
);

export const createDocumentSchema = createRouteSchema(
  {
    tags,
    summary: "Create the exam's document",
    description:
      "An exam has at most one document: a second create answers 422 'exam_id':['has already been taken'].",
  },
  one,
  documentInput,
  pathIds('exam_id'),
);

export const updateDocumentSchema = updateRouteSchema(
  { tags, summary: 'Update a document (exam_content is required)' },
  one,
  documentInput,
  pathIds('exam_id', 'id'),
);

export const destroyDocumentSchema = destroyRouteSchema(
  { tags, summary: 'Destroy a document with its attachments and their files' },
  { params: pathIds('exam_id', 'id') },
);
