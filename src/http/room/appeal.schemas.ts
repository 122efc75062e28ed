/**
 * OpenAPI descriptions of the candidate's appeal routes (docs/room-api.md, docs/appeals.md). They
 * document; the appeals service validates.
 */
import { APPEAL_FILES_MAX, APPEAL_STATUSES, STATEMENT_MAX } from '../../domain/appeals/appeal.ts';
import { errorBody } from '../v3/common.schemas.ts';

const tags = ['candidate room'];

const tokenParam = {
  type: 'object',
  properties: { token: { type: 'string', description: 'The session’s room token (32 hex characters)' } },
  required: ['token'],
} as const;

const time = { type: ['string', 'null'], format: 'date-time' } as const;
const text = { type: ['string', 'null'] } as const;

const roomAppealRecord = {
  type: 'object',
  properties: {
    verdict: { ...text, description: 'The verdict that may be or was appealed: suspicious or violation' },
    open: { type: 'boolean', description: 'True while an appeal would be accepted' },
    deadline: { ...time, description: 'The last instant an appeal is accepted' },
    appeal: {
      type: ['object', 'null'],
      properties: {
        status: { type: 'string', enum: APPEAL_STATUSES },
        statement: { type: 'string' },
        submitted_at: time,
        decided_at: time,
        comment: { ...text, description: "The second reviewer's comment, once decided" },
        files: {
          type: 'array',
          items: { type: 'object', properties: { file_name: { type: 'string' }, size: { type: 'integer' } } },
        },
      },
    },
  },
} as const;

const errors = {
  404: { description: "`Couldn't find the exam room`", ...errorBody },
  429: { description: 'Too many requests for this token', ...errorBody },
} as const;

export const roomAppealSchema = {
  tags,
  summary: 'The appeal state of the session: whether a final verdict may be appealed, and the appeal',
  params: tokenParam,
  response: { 200: { type: 'object', properties: { appeal: roomAppealRecord } }, ...errors },
} as const;

export const roomPostAppealSchema = {
  tags,
  summary: 'Appeal a final suspicious or violation verdict',
  description:
    `Multipart: \`statement\` (1 to ${STATEMENT_MAX} characters) and up to ${APPEAL_FILES_MAX} files ` +
    '(field `files`; PDF, images, office documents, as answer files). 201 while the verdict is final and the ' +
    "institute's appeal period open; 409 otherwise, and once an appeal was made.",
  consumes: ['multipart/form-data'],
  params: tokenParam,
  body: {
    type: 'object',
    properties: {
      statement: { type: 'string', maxLength: STATEMENT_MAX },
      files: { type: 'array', items: { type: 'string', format: 'binary' }, maxItems: APPEAL_FILES_MAX },
    },
    required: ['statement'],
  },
  response: {
    201: { type: 'object', properties: { appeal: roomAppealRecord } },
    409: { description: 'No final verdict to appeal, the period is over, or already appealed', ...errorBody },
    415: { description: 'File type not accepted', ...errorBody },
    422: { description: 'The statement is missing or too long, or too many files', ...errorBody },
    ...errors,
  },
} as const;
