import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

export const sendEmailsSchema = {
  tags: ['exams'],
  summary: 'Send the exam emails for all students of an exam',
  description:
    'Emails the exam link ({PUBLIC_URL}/room/<token>, with the exam name, the time window and the ' +
    "student's individual_info) to every student of the exam still `registered` and not yet emailed; " +
    'those move to `email_sent` with `is_email_sent: true`. Answers exactly the students just emailed, ' +
    'so a second call answers `{"students": []}`. The emails are written to the outbox in the same ' +
    "transaction and delivered in the background. When the institute's `exam_link_emails_enabled` is " +
    'off, nobody is emailed, nothing changes and the answer is empty. ' +
    "404 `Couldn't find Exam with 'id'=ID` when the exam is missing or out of scope; 403 when the " +
    'caller sees it but may not manage it.',
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: { type: 'object', properties: { students: { type: 'array', items: studentRecord } } },
    404: errorBody,
    ...commonErrors,
  },
} as const;
