import { SESSION_FILE_KINDS } from '../../domain/student-sessions/session-file.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';

const tags = ['student sessions'];

/** One entry of the files listing. */
export const sessionFileRecord = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: [...SESSION_FILE_KINDS] },
    sequence: { type: 'integer', description: 'From 0, counted per kind without gaps' },
    file_name: { type: 'string' },
    content_type: { type: 'string' },
    file_size: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    url: { type: 'string', format: 'uri' },
    expires_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const listSessionFilesSchema = {
  tags,
  summary: 'List the files the candidate room stored for a student session',
  description:
    'An Invigil addition beyond api.md: the answer files the student uploaded (`upload`) and the ' +
    'chunks of the webcam (`recording`), screen (`screen_recording`) and phone (`mobile_recording`) recordings, ordered by kind in ' +
    'that order, then by `sequence`. Each `url` downloads its file without credentials for 5 minutes ' +
    "(`expires_at`); after that, or altered, it is refused (403). It is always the service's own `/files/...` " +
    'address (the service decrypts what it stores, on disk or on S3). Readable by whoever may read the session. 404 ' +
    "`Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope; 422 " +
    "`'kind':['is not included in the list']` for an unknown `kind`.",
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: {
      ...signedParams,
      kind: {
        type: 'string',
        enum: [...SESSION_FILE_KINDS],
        description: 'Only the files of this kind (default: every kind)',
      },
    },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: { files: { type: 'array', items: sessionFileRecord } },
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
