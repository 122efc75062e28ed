import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

export const endExamSchema = {
  tags: ['student sessions'],
  summary: 'End the session, stop recordings, notify the student',
  description:
    'Moves the session to `exam_finished` (from any earlier status), sets `end_time` and ' +
    '`recording_ended_at` to now and `end_reason` to "api", and emails the student a notification ' +
    "(written to the outbox in the same transaction; not when the institute's " +
    '`exam_finalized_emails_enabled` is off). Ending a session that has already finished answers 200 with ' +
    'the record as it is: nothing changes and no email is sent. Allowed to whoever manages the exam and to ' +
    "the proctor assigned to the session. 404 `Couldn't find Student Session with 'id'=ID` when the " +
    'session is missing or out of scope; 403 when the caller sees it but may not end it.',
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: { type: 'object', properties: { student: studentRecord } },
    404: errorBody,
    ...commonErrors,
  },
} as const;
