/**
 * OpenAPI descriptions of a proctor's live actions on a student session (Invigil additions,
 * docs/api-live.md). They document; the domain validates.
 */
import { commonErrors, errorBody, idParam, signedParams, signedQuery, v3Headers } from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

const tags = ['live proctoring'];

/** Who may call every route below, and what the others get. */
const WHO =
  'Allowed to whoever may end the session: administrators, the exam’s owner and co-managers, and the ' +
  "proctor assigned to the session. 404 `Couldn't find Student Session with 'id'=ID` when the session is " +
  'missing or out of scope; 403 when the caller sees it but may not act on it.';

/** A chat message (src/live/protocol.ts LiveMessageJson), as V3, the room and the sockets answer it. */
export const liveMessageRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    student_session_id: { type: 'integer' },
    sender: { type: 'string', enum: ['proctor', 'candidate'] },
    author: {
      type: ['string', 'null'],
      description: 'The proctor’s name for a proctor’s message; null for the candidate’s',
    },
    body: { type: 'string', description: 'Plain text, 1 to 2000 characters, trimmed' },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'student_session_id', 'sender', 'author', 'body', 'created_at'],
} as const;

/** `{"messages": [...]}`, oldest first. */
export const liveMessageList = {
  type: 'object',
  properties: {
    messages: {
      type: 'array',
      items: liveMessageRecord,
      description: 'The newest 200 messages, oldest first',
    },
  },
  required: ['messages'],
} as const;

/** The body of a new message (`body`, besides the signing fields). */
export const messageBodyInput = {
  body: {
    type: 'string',
    minLength: 1,
    maxLength: 2000,
    description: 'Plain text; trimmed, then 1 to 2000 characters',
  },
} as const;

const one = { type: 'object', properties: { student: studentRecord } } as const;

const conflict = { description: 'Not allowed in the session’s state', ...errorBody } as const;

export const listMessagesSchema = {
  tags,
  summary: 'The chat with the candidate (Invigil addition)',
  description: `The newest 200 messages of the session, either side's, oldest first. ${WHO}`,
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: { 200: liveMessageList, 404: errorBody, ...commonErrors },
} as const;

export const postMessageSchema = {
  tags,
  summary: 'Write to the candidate (Invigil addition)',
  description:
    'Answers 201 with the message; the candidate’s room and the exam’s proctor wall receive it at once. ' +
    "422 `Param is missing or the value is empty: 'body'` for an absent or blank body, " +
    "`'body':['is too long (maximum is 2000 characters)']` past 2000 characters after trimming. 409 " +
    '`This exam has no live proctor` unless the exam is live_proctoring; 409 `The exam is finished: this ' +
    'student session accepts no more changes` for a finished session. ' +
    WHO,
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams, ...messageBodyInput },
    required: ['body', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    201: liveMessageRecord,
    404: errorBody,
    409: conflict,
    422: errorBody,
    ...commonErrors,
  },
} as const;

/** A proctor's action answering the student record. */
function actionSchema(summary: string, description: string) {
  return {
    tags,
    summary,
    description: `${description} ${WHO}`,
    headers: v3Headers,
    params: idParam(),
    body: { type: 'object', properties: { ...signedParams }, required: ['timestamp', 'nonce', 'signature'] },
    response: { 200: one, 404: errorBody, 409: conflict, ...commonErrors },
  } as const;
}

export const admitSchema = actionSchema(
  'Admit the candidate after a live ID check (Invigil addition)',
  'Moves the session from `in_setup` to `exam_not_started`, so the candidate may start, and records the ' +
    'incident "Admitted by NAME after a live ID check". 409 unless the session is in_setup.',
);

export const pauseSchema = actionSchema(
  'Pause the candidate’s exam clock (Invigil addition)',
  'Stops the candidate’s clock: their deadline moves later by as long as the clock stands still. Records ' +
    'the incident "The proctor paused the exam clock". 409 unless the session is exam_started with its ' +
    'clock running and its time not yet up.',
);

export const resumeSchema = actionSchema(
  'Resume the candidate’s exam clock (Invigil addition)',
  'Starts the clock again; `paused_seconds` keeps the pause. Records the incident "The proctor resumed ' +
    'the exam clock". 409 when the clock is not paused.',
);
