import {
  emptyAnswer,
  epochSeconds,
  flagInput,
  notAuthorized,
  nullableInteger,
  nullableString,
  timeInput,
  v2Params,
  v2PathIds,
  v2SignedQuery,
} from './common.schemas.ts';
import { accommodationsInput } from '../v3/student-sessions.schemas.ts';

const tags = ['v2'];

export const studentSessionRecordV2 = {
  type: 'object',
  properties: {
    student_id: {
      type: 'integer',
      description: "The student session's id (delete_student's student_session_id)",
    },
    name: { type: 'string' },
    email: { type: 'string' },
    attempt: { type: 'integer' },
    exam_id: { type: 'integer' },
    status: { type: 'string' },
    individual_info: nullableString,
    is_individual_info_html: { type: 'boolean' },
    open_time: epochSeconds,
    start_time: epochSeconds,
    end_time: epochSeconds,
    token: { type: 'string', description: 'Builds the exam room link {PUBLIC_URL}/room/<token>' },
  },
} as const;

export const showStudentsSchemaV2 = {
  tags,
  summary: 'V2: the students of an exam (key `student_session`, singular, holding an array)',
  params: v2PathIds('id'),
  querystring: v2SignedQuery,
  response: {
    200: {
      type: 'object',
      properties: { student_session: { type: 'array', items: studentSessionRecordV2 } },
    },
    403: notAuthorized,
    404: emptyAnswer('No such exam, or outside the caller’s scope'),
  },
} as const;

export const addStudentSchemaV2 = {
  tags,
  summary: 'V2: add a student to an exam; 200 {"student_session": record}',
  params: v2PathIds('id'),
  body: v2Params(
    {
      name: { type: 'string' },
      email: { type: 'string' },
      attempt: { type: 'integer', minimum: 0, default: 0 },
      use_duration: { ...flagInput, description: 'false or 0 disables the exam duration for this student' },
      open_time: { ...timeInput, description: "Epoch seconds, within the exam's start_time..end_time" },
      individual_info: nullableString,
      is_individual_info_html: flagInput,
      // The same reader as V3's create, so V3's optional fields are taken here too.
      skip_requirements: { ...flagInput, description: 'Skip the requirements check before the exam email' },
      priority: nullableString,
      external_id: nullableString,
      language: { ...nullableString, description: "The student's language: a supported BCP 47 tag" },
      student_lms_id: { ...nullableString, description: "The LMS's id of the student" },
      resource_link_id: { ...nullableString, description: 'The LTI resource link the student came from' },
      context_id: { ...nullableString, description: 'The LTI context (course) the student came from' },
      lti_resource_id: { ...nullableInteger, description: "An LTI resource of the exam's institute" },
      accommodations: {
        ...accommodationsInput,
        description:
          'V3 setting (docs/accommodations.md): extra time, rest breaks, exemptions, assistive technology, a ' +
          'staff note. A form nests the keys (`accommodations[extra_time_minutes]=10`; `breaks` and ' +
          '`exemptions` as JSON text) or sends the whole object as JSON text',
      },
    },
    ['name', 'email'],
  ),
  response: {
    200: { type: 'object', properties: { student_session: studentSessionRecordV2 } },
    400: {
      description: 'The save failed: {"errors": {FIELD: [MESSAGE]}} (empty for an unreadable body)',
      type: ['object', 'null'],
      properties: {
        errors: {
          type: 'object',
          additionalProperties: { type: 'array', items: { type: 'string' } },
          example: { email: ['has already been taken'] },
        },
      },
    },
    403: notAuthorized,
    404: emptyAnswer('No such exam, or outside the caller’s scope'),
  },
} as const;

export const deleteStudentSchemaV2 = {
  tags,
  summary: 'V2: remove a student from an exam (archived if it has ended); 200 with an empty body',
  params: v2PathIds('id'),
  querystring: v2Params({ student_session_id: { type: 'integer' } }, ['student_session_id']),
  response: {
    200: emptyAnswer('Destroyed, or archived when the session has an end time'),
    403: notAuthorized,
    404: emptyAnswer('student_session_id missing, or no such session in this exam in the caller’s scope'),
  },
} as const;
