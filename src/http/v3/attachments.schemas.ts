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
import { pathIds } from './documents.schemas.ts';

export const attachmentRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    exam_id: { type: 'integer' },
    document_id: { type: 'integer' },
    placeholder: { type: 'string', description: '[attachment:ID]: put it in exam_content to show a link' },
    file_name: { type: 'string', description: 'The name the file was uploaded with' },
    content_type: { type: 'string', description: 'Recognised from the content, not the declared type' },
    file_size: { type: 'integer' },
    url: { type: 'string', description: 'Download address, valid one minute' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const tags = ['attachments'];
const one = { type: 'object', properties: { attachment: attachmentRecord } } as const;

/** The schemas of one route set: the exam's document (`exam_id`) or a named one (`exam_id`, `document_id`). */
export function attachmentSchemas(owner: readonly string[]) {
  const whose = owner.includes('document_id') ? 'the document' : "the exam's document";
  return {
    list: {
      tags,
      summary: `List the attachments of ${whose}`,
      description: 'Filter/sort fields: id, file_name, content_type, file_size, created_at.',
      headers: v3Headers,
      params: pathIds(...owner),
      querystring: listQuery,
      response: {
        200: {
          headers: paginationHeaders,
          type: 'object',
          properties: { attachments: { type: 'array', items: attachmentRecord } },
        },
        404: errorBody,
        422: errorBody,
        ...commonErrors,
      },
    },
    show: {
      tags,
      summary: 'Show an attachment',
      headers: v3Headers,
      params: pathIds(...owner, 'id'),
      querystring: signedQuery,
      response: { 200: one, 404: errorBody, ...commonErrors },
    },
    create: {
      tags,
      summary: `Attach a file to ${whose} (multipart)`,
      description:
        'The file goes in the multipart field `document` and is not signed; the other fields are. ' +
        'Allowed contents: PDF, PNG, JPEG, GIF, WebP, plain text, zip and office documents, recognised ' +
        'from the bytes (415 otherwise). ' +
        (owner.includes('document_id') ? '' : 'An exam without a document gets an empty one.'),
      consumes: ['multipart/form-data'],
      headers: v3Headers,
      params: pathIds(...owner),
      body: {
        type: 'object',
        properties: { ...signedParams, document: { type: 'string', format: 'binary' } },
        required: ['document', 'timestamp', 'nonce', 'signature'],
      },
      response: { 201: one, 404: errorBody, 413: errorBody, 415: errorBody, 422: errorBody, ...commonErrors },
    },
    destroy: {
      tags,
      summary: 'Destroy an attachment, removing its placeholder from the document text',
      headers: v3Headers,
      params: pathIds(...owner, 'id'),
      querystring: signedQuery,
      response: { 200: emptyObject, 404: errorBody, ...commonErrors },
    },
  } as const;
}
