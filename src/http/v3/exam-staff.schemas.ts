import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';
import { userRecord } from './users.schemas.ts';

/** The V3 user record as the `comanager` answer carries it (no credentials). */
export const comanagerRecord = userRecord;

const comanagerId = {
  type: 'integer',
  description: "A teacher or administrator of the exam's institute, not the exam's owner",
} as const;
const proctorId = {
  type: 'integer',
  description: "A proctor or administrator of the exam's institute",
} as const;

const comanagerAnswer = { type: 'object', properties: { comanager: comanagerRecord } } as const;
const studentAnswer = { type: 'object', properties: { student: studentRecord } } as const;

const COMANAGER_ERRORS =
  "404 `Couldn't find Exam with 'id'=ID` when the exam is missing or out of scope; 403 when the caller " +
  "sees the exam but may not manage it; 422 `Param is missing or the value is empty: 'comanager_id'`; " +
  "404 `Couldn't find User with 'id'=ID` for a user that is unknown or of another institute; 422 on " +
  '`comanager_id` for the exam owner or a user who may not co-manage (not a teacher or administrator).';

export const addComanagerSchema = {
  tags: ['exams'],
  summary: 'Add a user as co-manager of an exam',
  description:
    "A co-manager has the owner's rights on the exam and everything under it. Adding a co-manager twice " +
    `keeps one (200 both times). ${COMANAGER_ERRORS}`,
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams, comanager_id: comanagerId },
    required: ['comanager_id', 'timestamp', 'nonce', 'signature'],
  },
  response: { 200: comanagerAnswer, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const removeComanagerSchema = {
  tags: ['exams'],
  summary: 'Remove a user as co-manager of an exam',
  description:
    'Removing a user who is not a co-manager is harmless (200). A listed co-manager is removed whatever ' +
    `its role now is. ${COMANAGER_ERRORS}`,
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: { ...signedParams, comanager_id: comanagerId },
    required: ['comanager_id', 'timestamp', 'nonce', 'signature'],
  },
  response: { 200: comanagerAnswer, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const assignProctorSchema = {
  tags: ['student sessions'],
  summary: 'Assign a proctor to a student session',
  description:
    'Replaces any proctor the session had; assigning the same proctor again changes nothing. ' +
    "`active_proctoring_sessions` counts the proctor's live candidates: the sessions now assigned to that " +
    'proctor whose `live_status` is `live`, whose status is not `exam_finished`, that are not archived and ' +
    'whose exam is not deleted. ' +
    "404 `Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope; 403 " +
    "when the caller sees it but may not manage its exam; 422 `Param is missing or the value is empty: 'proctor_id'`; " +
    "404 `Couldn't find User with 'id'=ID` for a user that is unknown or of another institute; 422 on " +
    '`proctor_id` for a user who may not proctor (not a proctor or administrator).',
  headers: v3Headers,
  params: idParam(),
  body: {
    type: 'object',
    properties: { ...signedParams, proctor_id: proctorId },
    required: ['proctor_id', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: {
        student: studentRecord,
        active_proctoring_sessions: {
          type: 'integer',
          minimum: 0,
          description: "The proctor's assigned sessions whose candidate is live now",
        },
      },
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const unassignProctorSchema = {
  tags: ['student sessions'],
  summary: 'Unassign the proctor of a student session',
  description: 'The answer carries `proctor_id: null`; a session without a proctor answers the same (200).',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: { 200: studentAnswer, 404: errorBody, ...commonErrors },
} as const;
