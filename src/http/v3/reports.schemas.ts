import { LOCALES } from '../../i18n/locales.ts';
import { commonErrors, errorBody, idParam, signedQuery, v3Headers } from './common.schemas.ts';

const tags = ['student sessions'];

export const sessionReportSchema = {
  tags,
  summary: 'Download the report of a student session as PDF',
  description:
    'A PDF for a misconduct committee (docs/reports.md): the session’s facts (student, exam, ' +
    'institute, identifiers, times, browser and operating system, checks, status), the ID card and ' +
    'face photo, the recordings’ summary, every incident with its time since the start and in the ' +
    'exam’s time zone, the verdict with its reviewer, time and comment, and the verdict history; every ' +
    'page carries the moment of generation and its page number. Answered as `application/pdf` with ' +
    '`Content-Disposition: attachment; filename="student-session-<id>-report.pdf"`. Readable by ' +
    'whoever may read the session (signed, or the console’s session cookie). 404 ' +
    "`Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope. " +
    'Written in the institute’s `default_language` unless `language` names another (an Arabic ' +
    'report is laid out right to left: docs/languages.md); 422 naming `language` for a language the ' +
    'service does not speak.',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    ...signedQuery,
    properties: {
      ...signedQuery.properties,
      language: {
        type: 'string',
        enum: [...LOCALES],
        description:
          'The language of the report’s words and dates; the institute’s default language when absent.',
      },
    },
  },
  produces: ['application/pdf'],
  response: {
    200: { description: 'The report', type: 'string', format: 'binary' },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
