import { ZIP_JOB_STATUSES } from '../../domain/exports/exam-export.ts';
import { commonErrors, errorBody, idParam, signedParams, signedQuery, v3Headers } from './common.schemas.ts';

const tags = ['exams'];

const ACCESS =
  "Only those who manage the exam (superuser, the institute's administrators, its owner and " +
  "co-managers) may call it. 404 `Couldn't find Exam with 'id'=ID` when the exam is missing, deleted " +
  'or out of scope; 403 when the caller sees the exam but may not manage it (proctor, reviewer, ' +
  'auditor).';

export const generateZipSchema = {
  tags,
  summary: "Request a zip of every file the exam's students handed in",
  description:
    'Queues a durable `exam_zip` job that builds the archive: one folder per student session ' +
    '(`<session id>-<email>/`) with each exam document and upload under its original name (made ' +
    'path-safe and unique), and `manifest.json` with the size and SHA-256 of each file. While a job ' +
    'of this exam is queued or running, nothing new is queued (whatever its `include`). 202 with an ' +
    'empty body. `include` adds, per session, `photos` (ID card and face photo), `recordings` (the ' +
    'finalised WebM recordings) and `reports` (the session report PDF): comma-separated, e.g. ' +
    "`photos,reports`; without it the archive is as before. 422 `'include':['is not included in the " +
    "list']` for any other value. " +
    ACCESS,
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: {
      ...signedParams,
      include: {
        type: 'string',
        description: 'What to add per session, comma-separated: recordings, photos, reports',
        example: 'photos,reports',
      },
    },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    202: { description: 'Queued (or already queued or running); empty body', type: 'null' },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const zipStatusSchema = {
  tags,
  summary: "Status of the exam's documents zip job",
  description:
    '`never_run` (never requested), `queued`, `running`, `success` (the archive can be downloaded), ' +
    '`failure` (the last job gave up), `not_found` (it succeeded, but its archive is gone). A job ' +
    'waiting to retry after a failed attempt reads `queued`. ' +
    ACCESS,
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: {
    200: {
      type: 'object',
      properties: { zip_job_status: { type: 'string', enum: [...ZIP_JOB_STATUSES] } },
      required: ['zip_job_status'],
    },
    404: errorBody,
    ...commonErrors,
  },
} as const;

export const downloadZipSchema = {
  tags,
  summary: "Download the exam's documents zip",
  description:
    'Streams the archive (`application/zip`, `Content-Disposition: attachment; ' +
    'filename="exam-<id>-documents.zip"`) once the status is `success`. Before that, or once the ' +
    "archive is gone: 404 `Couldn't find the exam documents zip`. " +
    ACCESS,
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  produces: ['application/zip'],
  response: {
    200: { description: 'The zip archive', type: 'string', format: 'binary' },
    404: errorBody,
    ...commonErrors,
  },
} as const;
