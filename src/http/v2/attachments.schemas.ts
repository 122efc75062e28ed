import {
  emptyAnswer,
  notAuthorized,
  v2Params,
  v2PathIds,
  v2SignedParams,
  v2SignedQuery,
} from './common.schemas.ts';

const tags = ['v2'];

export const attachmentRecordV2 = {
  type: 'object',
  properties: {
    attachment_id: { type: 'integer' },
    placeholder: { type: 'string', description: '[attachment:ID]: put it in document_text to show a link' },
    url: { type: 'string', description: 'Download address, valid one minute' },
    exam_id: { type: 'integer' },
    document_id: { type: 'integer' },
  },
} as const;

export const addAttachmentSchemaV2 = {
  tags,
  summary: 'V2: attach a file to a document (multipart); 200 {"attachment": record}',
  description:
    'The file goes in the multipart field `file` and is not signed; the other fields are. Allowed ' +
    'contents: PDF, PNG, JPEG, GIF, WebP, plain text, zip and office documents, recognised from the ' +
    'bytes; any other content is a failed save (400).',
  consumes: ['multipart/form-data'],
  params: v2PathIds('id'),
  body: {
    type: 'object',
    properties: { ...v2SignedParams, file: { type: 'string', format: 'binary' } },
    required: ['file', 'api_token', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    200: { type: 'object', properties: { attachment: attachmentRecordV2 } },
    400: emptyAnswer('No file, an empty file, or a file type that is not allowed'),
    403: notAuthorized,
    404: emptyAnswer('No such document, or its exam is outside the caller’s scope'),
    413: emptyAnswer('The file is over the size limit'),
  },
} as const;

export const listAttachmentsSchemaV2 = {
  tags,
  summary: 'V2: the attachments of the exam of a document',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: { type: 'object', properties: { attachments: { type: 'array', items: attachmentRecordV2 } } },
    400: emptyAnswer('No such document in the caller’s scope (api.md: 400 on failure)'),
    403: notAuthorized,
  },
} as const;

export const destroyAttachmentSchemaV2 = {
  tags,
  summary: 'V2: destroy an attachment and remove its placeholder from the text; 200 with an empty body',
  params: v2PathIds('id'),
  querystring: v2Params({ attachment_id: { type: 'integer' } }, ['attachment_id']),
  response: {
    200: emptyAnswer('Destroyed'),
    400: emptyAnswer('attachment_id missing, or no such document or attachment in the caller’s scope'),
    403: notAuthorized,
  },
} as const;
