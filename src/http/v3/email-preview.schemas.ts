import { PREVIEW_KINDS } from '../../domain/student-sessions/email-preview.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';

export const emailPreviewSchema = {
  tags: ['exams'],
  summary: 'Preview an email send_emails would send, without sending it',
  description:
    'Renders the email of `kind` (`exam_link`: the email send_emails sends) for the student session ' +
    '`student_session_id` names, which must belong to the exam, exactly as send_emails would write it ' +
    "to the outbox: subject, plain text and HTML, the student's room link included. Without " +
    '`student_session_id`, for a sample candidate who does not exist (`sample: true`, "Sample Student", ' +
    'sample.student@example.invalid, a room link that opens nothing). Nothing is written or sent, and ' +
    'the session does not change. Only those who manage the exam may preview (403 otherwise). 404 ' +
    "`Couldn't find Exam with 'id'=ID` when the exam is missing or out of scope, then `Couldn't find " +
    "Student Session with 'id'=ID` when the session is not one of the exam's; 422 for a missing or " +
    'unknown `kind`.',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: {
      ...signedParams,
      kind: { type: 'string', enum: [...PREVIEW_KINDS], description: 'Which email' },
      student_session_id: {
        type: 'integer',
        description: 'A session of the exam; absent or empty: the sample candidate',
      },
    },
    required: ['kind', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: [...PREVIEW_KINDS] },
        to: { type: 'string', description: 'The address it would go to' },
        subject: { type: 'string' },
        text: { type: 'string', description: 'The text/plain part' },
        html: { type: 'string', description: 'The text/html part (a whole HTML document)' },
        sample: { type: 'boolean', description: 'True when made for the sample candidate' },
      },
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
