import { emptyAnswer, notAuthorized, v2Params, v2PathIds, v2SignedQuery } from './common.schemas.ts';

const tags = ['v2'];

export const documentRecordV2 = {
  type: 'object',
  properties: {
    document_id: { type: 'integer' },
    exam_id: { type: 'integer' },
    document_text: { type: 'string', description: 'HTML: paragraphs and line breaks, other markup escaped' },
    has_attachments: { type: 'boolean' },
    user_id: { type: 'integer', description: "The exam's owner" },
    institute_id: { type: 'integer', description: "The exam's institute" },
  },
} as const;

const documentText = {
  type: 'string',
  minLength: 1,
  description: 'The instruction text; may hold [attachment:ID] placeholders',
} as const;

export const listDocumentsSchemaV2 = {
  tags,
  summary: 'V2: the documents of the exams the caller owns or co-manages',
  querystring: v2SignedQuery,
  response: {
    200: { type: 'object', properties: { documents: { type: 'array', items: documentRecordV2 } } },
    400: emptyAnswer('The caller has no documents'),
    403: notAuthorized,
  },
} as const;

export const showDocumentSchemaV2 = {
  tags,
  summary: 'V2: one document',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: { type: 'object', properties: { document: documentRecordV2 } },
    403: notAuthorized,
    404: emptyAnswer('No such document, or its exam is outside the caller’s scope'),
  },
} as const;

export const createDocumentSchemaV2 = {
  tags,
  summary: 'V2: create the document of an exam; answers 201 {"id": ID}',
  body: v2Params({ exam_id: { type: 'integer' }, document_text: documentText }, ['exam_id', 'document_text']),
  response: {
    201: { type: 'object', properties: { id: { type: 'integer' } } },
    400: emptyAnswer('A parameter is missing, or no such exam in the caller’s scope'),
    403: {
      ...notAuthorized,
      description: `The exam already has a document (empty body); or: ${notAuthorized.description}`,
    },
  },
} as const;

export const updateDocumentSchemaV2 = {
  tags,
  summary: 'V2: replace the text of a document; 200 with an empty body',
  params: v2PathIds('id'),
  body: v2Params({ document_text: documentText }, ['document_text']),
  response: {
    200: emptyAnswer('Updated'),
    400: emptyAnswer('document_text missing, or no such document in the caller’s scope'),
    403: notAuthorized,
  },
} as const;

export const destroyDocumentSchemaV2 = {
  tags,
  summary: 'V2: destroy a document with its attachments; 200 with an empty body',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: emptyAnswer('Destroyed'),
    400: emptyAnswer('No such document in the caller’s scope'),
    403: notAuthorized,
  },
} as const;
