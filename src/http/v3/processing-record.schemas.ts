import { LOCALES } from '../../i18n/locales.ts';
import { commonErrors, errorBody, idParam, signedQuery, v3Headers } from './common.schemas.ts';

export const processingRecordSchema = {
  tags: ['institutes'],
  summary: 'Download the institute’s record of processing as PDF',
  description:
    'The record of processing for the data protection officer (docs/data-protection.md), generated ' +
    'from the institute’s settings at the moment of the request: the controller and its privacy ' +
    'contact and data protection officer, the purposes, which kinds of data its exams use (webcam, ' +
    'photos, screen, phone, uploads, automated flags, live proctoring), the staff roles that read ' +
    'them, the processors the service is configured with (file storage, mail server, live media ' +
    'engine, LMS platforms, identity providers, webhook receiver), transfers, the retention of each ' +
    'kind, legal holds and the safeguards. Answered as `application/pdf` with `Content-Disposition: ' +
    'attachment; filename="institute-<id>-record-of-processing-<language>.pdf"`. For the ' +
    "institute’s administrators and superusers: 403 for any other member, 404 `Couldn't find " +
    "Institute with 'id'=ID` for another institute or a missing one. Written in the institute’s " +
    '`default_language` unless `language` names another (Arabic is laid out right to left); 422 ' +
    'naming `language` for a language the service does not speak. Each download is recorded in the ' +
    'audit log as `record_of_processing_downloaded`.',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    ...signedQuery,
    properties: {
      ...signedQuery.properties,
      language: {
        type: 'string',
        enum: [...LOCALES],
        description: 'The language of the record; the institute’s default language when absent.',
      },
    },
  },
  produces: ['application/pdf'],
  response: {
    200: { description: 'The record of processing', type: 'string', format: 'binary' },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
