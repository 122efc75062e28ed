import { MOBILE_STATUSES } from '../../domain/mobile/mobile.ts';
import { FLAG_TYPES } from '../../domain/flags/flag-types.ts';
import {
  ACCOMMODATION_NOTE_MAX,
  BREAK_MINUTES_MAX,
  BREAKS_COUNT_MAX,
  EXEMPT_CHECKS,
  EXEMPTION_REASON_MAX,
  EXTRA_TIME_MINUTES_MAX,
  EXTRA_TIME_PERCENT_MAX,
} from '../../domain/student-sessions/accommodations.ts';
import { PRACTICE_STATUSES } from '../../domain/student-sessions/student-session.ts';
import {
  commonErrors,
  createRouteSchema,
  destroyRouteSchema,
  emptyObject,
  errorBody,
  flag,
  idParam,
  listQuery,
  nullableInteger,
  nullableString,
  nullableTime,
  paginationHeaders,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
  v3Headers,
} from './common.schemas.ts';

const check = {
  type: 'string',
  enum: ['not_started', 'not_completed', 'succeeded', 'failed', 'skipped'],
} as const;
const timeInput = { type: 'string', description: 'ISO 8601, a date, or epoch seconds/milliseconds' } as const;
const flagInput = {
  type: ['boolean', 'string', 'integer'],
  enum: [true, false, 'true', 'false', '1', '0', 1, 0],
} as const;

export const incidentRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    student_session_id: { type: 'integer' },
    comment: { type: 'string' },
    created_at: nullableTime,
    updated_at: nullableTime,
    offset_time: nullableInteger,
    type: {
      type: ['string', 'null'],
      enum: [...FLAG_TYPES, null],
      description: 'An automated flag’s type (docs/automated-flags.md); null for other incidents',
    },
    source: {
      type: ['string', 'null'],
      enum: ['automatic', null],
      description: '`automatic` for an automated flag; null for staff’s incidents and the room’s events',
    },
    confidence: {
      type: ['number', 'null'],
      minimum: 0,
      maximum: 1,
      description: 'A flag’s confidence, 0 to 1',
    },
    end_offset_time: {
      ...nullableInteger,
      description:
        'Where a flag’s episode ended (seconds since the start); null while it lasts, and for others',
    },
    dismissed: { type: 'boolean', description: 'A reviewer dismissed this flag (it is kept, marked)' },
    dismissed_at: nullableTime,
    dismissed_by: { ...nullableInteger, description: 'The user who dismissed the flag' },
    informational: {
      type: 'boolean',
      description:
        'An automated flag recorded for the record only, never raised: assistive technology set it off ' +
        'for a student with that accommodation (docs/accommodations.md); false for every other incident',
    },
  },
} as const;

const exemptionRecord = {
  type: 'object',
  properties: {
    check: { type: 'string', enum: [...EXEMPT_CHECKS] },
    reason: { type: 'string', description: 'Why, for staff only (never shown to the candidate)' },
  },
  required: ['check', 'reason'],
  additionalProperties: false,
} as const;

/** The accommodations as every record shows them (docs/accommodations.md): every key present. */
export const accommodationsRecord = {
  type: 'object',
  description:
    "The student's accommodations (docs/accommodations.md); every key present, zero, null, false or " +
    'empty when not given',
  properties: {
    extra_time_minutes: { type: 'integer', minimum: 0, maximum: EXTRA_TIME_MINUTES_MAX },
    extra_time_percent: {
      type: 'integer',
      minimum: 0,
      maximum: EXTRA_TIME_PERCENT_MAX,
      description: "Of the exam's duration; applied before extra_time_minutes",
    },
    breaks: {
      type: ['object', 'null'],
      description: 'Up to `count` rest breaks of up to `minutes` each; null: none',
      properties: {
        count: { type: 'integer', minimum: 1, maximum: BREAKS_COUNT_MAX },
        minutes: { type: 'integer', minimum: 1, maximum: BREAK_MINUTES_MAX },
      },
      required: ['count', 'minutes'],
      additionalProperties: false,
    },
    exemptions: { type: 'array', items: exemptionRecord, description: 'At most one per check' },
    assistive_technology: {
      type: 'boolean',
      description: 'Automated flags that assistive technology sets off are recorded as informational only',
    },
    note: { ...nullableString, description: 'For proctors and reviewers only' },
  },
  required: [
    'extra_time_minutes',
    'extra_time_percent',
    'breaks',
    'exemptions',
    'assistive_technology',
    'note',
  ],
  additionalProperties: false,
} as const;

/** The accommodations a create or update may send: any subset of the keys; null clears them all. */
export const accommodationsInput = {
  description:
    'Any subset of the keys; on update the keys sent replace the current values and the rest are kept. ' +
    'null (or empty) clears every accommodation. A form may nest the keys (`accommodations[extra_time_minutes]=10`) ' +
    'or send the object as JSON text. 422 names the refused key (`accommodations.extra_time_minutes`, ' +
    '`accommodations.exemptions[0].check`, `accommodations.foo` for an unknown key)',
  anyOf: [
    {
      type: 'object',
      properties: {
        extra_time_minutes: {
          type: ['integer', 'string', 'null'],
          minimum: 0,
          maximum: EXTRA_TIME_MINUTES_MAX,
          description: `Whole minutes, 0 to ${EXTRA_TIME_MINUTES_MAX}`,
        },
        extra_time_percent: {
          type: ['integer', 'string', 'null'],
          minimum: 0,
          maximum: EXTRA_TIME_PERCENT_MAX,
          description: `Percent of the exam's duration, 0 to ${EXTRA_TIME_PERCENT_MAX}`,
        },
        breaks: {
          anyOf: [
            {
              type: 'object',
              properties: {
                count: {
                  type: ['integer', 'string'],
                  minimum: 0,
                  maximum: BREAKS_COUNT_MAX,
                  description: `0 to ${BREAKS_COUNT_MAX}; 0 means no breaks`,
                },
                minutes: {
                  type: ['integer', 'string'],
                  minimum: 1,
                  maximum: BREAK_MINUTES_MAX,
                  description: `1 to ${BREAK_MINUTES_MAX}; required with a count`,
                },
              },
              additionalProperties: false,
            },
            { type: 'string', description: 'The same object as JSON text' },
            { type: 'null' },
          ],
          description: 'null: no breaks',
        },
        exemptions: {
          anyOf: [
            {
              type: 'array',
              items: {
                ...exemptionRecord,
                properties: {
                  ...exemptionRecord.properties,
                  reason: {
                    type: 'string',
                    description: `Required, at most ${EXEMPTION_REASON_MAX} characters; staff only`,
                  },
                },
              },
            },
            { type: 'string', description: 'The same list as JSON text' },
            { type: 'null' },
          ],
          description: 'The whole list (it replaces the current one); null or [] for none',
        },
        assistive_technology: flagInput,
        note: {
          type: ['string', 'null'],
          description: `At most ${ACCOMMODATION_NOTE_MAX} characters, staff only; empty or null clears it`,
        },
      },
      additionalProperties: false,
    },
    { type: 'string', description: 'The same object as JSON text' },
    { type: 'null' },
  ],
} as const;

export const studentRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    session_id: nullableString,
    student_id: nullableString,
    time_slot: { type: 'integer' },
    created_at: nullableTime,
    updated_at: nullableTime,
    email: { type: 'string', description: 'Stored trimmed and in lower case' },
    name: { type: 'string' },
    pin_code: { type: 'integer', description: '6 digits' },
    operating_system: nullableString,
    browser: nullableString,
    browser_version: nullableString,
    status: {
      type: 'string',
      enum: [
        'registered',
        'email_sent',
        'after_check_req',
        'in_setup',
        'exam_not_started',
        'exam_started',
        'exam_finished',
      ],
    },
    token: { type: 'string', description: '32 hex characters; the exam-room link is /room/<token>' },
    screenshare_check: check,
    microphone_check: check,
    speakers_check: check,
    webcam_check: check,
    mobile_check: check,
    bandwidth_check: check,
    bandwidth_speed: { type: ['number', 'null'] },
    dummy_exam_survey: nullableString,
    skip_requirements: flag,
    send_confirmation: flag,
    start_time: nullableTime,
    end_time: nullableTime,
    open_time: nullableTime,
    reservation_time: nullableTime,
    expires_at: nullableTime,
    recording_started_at: nullableTime,
    recording_ended_at: nullableTime,
    exam_id: { type: 'integer' },
    entered_room: flag,
    exam_document_content_type: nullableString,
    exam_document_file_size: nullableInteger,
    exam_document_updated_at: nullableTime,
    reviewed: { type: 'string' },
    id_card_file_name: nullableString,
    id_card_content_type: nullableString,
    id_card_file_size: nullableInteger,
    face_photo_file_name: nullableString,
    face_photo_content_type: nullableString,
    face_photo_file_size: nullableInteger,
    individual_info: nullableString,
    is_individual_info_html: flag,
    rtc_session_id: nullableInteger,
    rtc_session_ids: { type: 'array' },
    in_setup: flag,
    in_check_requirements: flag,
    attempt: { type: 'integer' },
    archived: flag,
    current_exam_mode: nullableString,
    transcoding_status: {
      type: 'string',
      enum: ['not_sent_to_queue', 'queued', 'processing', 'completed', 'failed'],
    },
    priority: nullableString,
    is_email_sent: { type: 'boolean', description: 'Absent from the create answer' },
    use_duration: flag,
    proctor_id: nullableInteger,
    external_id: nullableString,
    end_reason: nullableString,
    student_lms_id: { ...nullableString, description: "The LMS's id of the student (LTI user_id / sub)" },
    resource_link_id: { ...nullableString, description: 'The LTI resource link the student came from' },
    context_id: { ...nullableString, description: 'The LTI context (course) the student came from' },
    lti_resource_id: { ...nullableInteger, description: 'The LTI resource the student came through' },
    live_status: {
      type: 'string',
      enum: ['offline', 'connecting', 'live'],
      description:
        "The candidate's live connection (live-proctored exams, docs/api-live.md): offline (no room " +
        'socket), connecting (socket open, media not flowing yet), live',
    },
    clock_paused: { type: 'boolean', description: "A proctor holds the candidate's exam clock still" },
    paused_seconds: {
      type: 'integer',
      minimum: 0,
      description:
        "How long the candidate's clock has stood still in all: the pauses that ended and the running one",
    },
    mobile_status: {
      type: 'string',
      enum: [...MOBILE_STATUSES],
      description:
        'The phone of a mobile_cam exam (docs/room-api.md "The phone"): not_paired, paired, streaming ' +
        '(sending video) or lost (not heard from for 15 seconds); not_paired for other exams',
    },
    mobile_device: { ...nullableString, description: 'The phone’s browser and system, as it reported them' },
    terms_accepted_at: {
      ...nullableTime,
      description:
        'When the candidate accepted the exam\'s terms in the room (docs/room.md "Terms"); null until ' +
        'then, and for an exam without terms',
    },
    language: {
      ...nullableString,
      description:
        'The student’s language (docs/languages.md): a supported BCP 47 tag in canonical case, set by the ' +
        'exam office or from an LTI launch’s locale; null when unset',
      example: 'nl',
    },
    chosen_language: {
      ...nullableString,
      description:
        'The language the candidate picked in the room’s or the phone’s language menu; null before a pick. ' +
        'It comes before `language` when the pages choose theirs',
    },
    accommodations: accommodationsRecord,
    deadline_at: {
      ...nullableTime,
      description:
        'When the exam ends for this student (the one clock, docs/accommodations.md): duration and extra ' +
        'time from start_time, the exam’s end_time, moved on by proctor pauses and rest breaks. Null until ' +
        'started, and when neither a duration nor an end_time limits the exam',
    },
    time_allowed_seconds: {
      ...nullableInteger,
      minimum: 0,
      description:
        'The duration plus extra time, in seconds, when the student is timed by the exam’s duration; null otherwise',
    },
    breaks_taken: { type: 'integer', minimum: 0, description: 'Rest breaks the student started' },
    on_break: { type: 'boolean', description: 'The student is on a rest break now' },
    practice: {
      type: 'object',
      description: 'The newest practice run\'s outcome (docs/accommodations.md, "Practice run")',
      properties: {
        status: { type: 'string', enum: [...PRACTICE_STATUSES] },
        failed_check: { ...nullableString, description: 'The check a failed run stopped at' },
        at: { ...nullableTime, description: 'When the newest run began or ended; null before the first' },
      },
      required: ['status', 'failed_check', 'at'],
      additionalProperties: false,
    },
    incidents_count: { type: 'integer' },
    incidents: { type: 'array', items: incidentRecord },
  },
} as const;

const sessionFields = {
  individual_info: { type: 'string', description: 'Information for this student only' },
  is_individual_info_html: { ...flagInput, description: 'true: HTML, false: plain text' },
  skip_requirements: { ...flagInput, description: 'Skip the requirements check before the exam email' },
  open_time: { ...timeInput, description: "Earliest start; within the exam's start_time..end_time" },
  priority: { type: 'string' },
  external_id: { type: 'string' },
  use_duration: { ...flagInput, default: true },
  language: {
    type: ['string', 'null'],
    description:
      "The student's language: a supported BCP 47 tag (en, nl, de, fr, es, it, ar, optionally with a " +
      "region such as de-CH), stored in canonical case; empty or null clears it. 422 'is not a valid " +
      "language tag' or 'is not included in the list'",
  },
  student_lms_id: { type: 'string', description: "The LMS's id of the student; empty clears it" },
  resource_link_id: {
    type: 'string',
    description: 'The LTI resource link; defaults to that of lti_resource_id',
  },
  context_id: { type: 'string', description: 'The LTI context; defaults to that of lti_resource_id' },
  lti_resource_id: {
    type: ['integer', 'null'],
    description: "An LTI resource of the exam's institute, linked to this exam or to none; null unlinks",
  },
  accommodations: accommodationsInput,
} as const;

const createInput = {
  type: 'object',
  properties: {
    ...signedParams,
    name: { type: 'string', description: 'At most 200 characters (longer: 422)' },
    email: { type: 'string', description: 'Compared case-insensitively' },
    attempt: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'Unique per email; a new attempt is one above the highest',
    },
    ...sessionFields,
  },
  required: ['name', 'email', 'timestamp', 'nonce', 'signature'],
} as const;

const updateInput = {
  type: 'object',
  properties: {
    ...signedParams,
    name: { type: 'string', description: 'At most 200 characters (longer: 422)' },
    email: { type: 'string' },
    ...sessionFields,
    reviewed: {
      type: 'string',
      enum: ['not_reviewed', 'in_review', 'passed', 'suspicious', 'violation'],
      description: 'Records a verdict, as PUT /student_sessions/:id/review does (docs/review.md)',
    },
    comment: { type: 'string', description: 'The comment of a reviewed verdict' },
  },
} as const;

const tags = ['student sessions'];
const one = { type: 'object', properties: { student: studentRecord } } as const;

/** The create answer: the record without `is_email_sent` (api.md: absent from the create response). */
const created = {
  type: 'object',
  properties: {
    student: {
      ...studentRecord,
      required: Object.keys(studentRecord.properties).filter((name) => name !== 'is_email_sent'),
    },
  },
} as const;
const many = {
  headers: paginationHeaders,
  type: 'object',
  properties: { students: { type: 'array', items: studentRecord } },
} as const;

const LIST_DESCRIPTION =
  'Filter/sort fields: id, exam_id, name, email, status, attempt, archived, is_email_sent, created_at, ' +
  'updated_at, start_time, end_time, open_time, external_id, proctor_id, priority, student_lms_id, ' +
  'resource_link_id, context_id, lti_resource_id, language, practice_status (not_tried, running, passed, ' +
  'failed). Archived sessions appear ' +
  'only when filtering on archived. Email operands compare case-insensitively. Incidents are included.';

export const listExamStudentsSchema = {
  tags,
  summary: 'List the student sessions of an exam',
  description: LIST_DESCRIPTION,
  headers: v3Headers,
  params: idParam('exam_id'),
  querystring: listQuery,
  response: { 200: many, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const listStudentsSchema = {
  tags,
  summary: 'List every student session the caller may see',
  description: LIST_DESCRIPTION,
  headers: v3Headers,
  querystring: listQuery,
  response: { 200: many, 422: errorBody, ...commonErrors },
} as const;

export const showStudentSchema = showRouteSchema({ tags, summary: 'Show a student session' }, one);

export const createStudentSchema = createRouteSchema(
  { tags, summary: 'Create and add a student to an exam' },
  created,
  createInput,
  idParam('exam_id'),
);

export const updateStudentSchema = updateRouteSchema(
  { tags, summary: 'Update a student session' },
  one,
  updateInput,
);

export const destroyStudentSchema = destroyRouteSchema({
  tags,
  summary: 'Destroy a student session (archived instead when it has an end time)',
});

export const addIncidentSchema = createRouteSchema(
  { tags, summary: 'Record an incident on a student session (proctors, reviewers, managers)' },
  one,
  {
    type: 'object',
    properties: {
      ...signedParams,
      comment: { type: 'string', description: 'At most 2000 characters (longer: 422)' },
      offset_time: { type: 'integer', minimum: 0, description: 'Seconds from the start of the recording' },
    },
    required: ['comment', 'timestamp', 'nonce', 'signature'],
  },
  idParam(),
);

const deprecationHeaders = {
  Deprecation: { type: 'string', enum: ['true'] },
  Link: { type: 'string', description: '</api/v3/...>; rel="successor-version"' },
} as const;
const sessionIdQuery = {
  type: 'object',
  properties: { ...signedParams, student_session_id: { type: 'integer' } },
  required: ['student_session_id', 'timestamp', 'nonce', 'signature'],
} as const;
const deprecatedTags = ['deprecated'];

export const indexStudentsSchema = {
  tags: deprecatedTags,
  deprecated: true,
  summary: 'Deprecated: GET /exams/:exam_id/student_sessions',
  description: LIST_DESCRIPTION,
  headers: v3Headers,
  params: idParam(),
  querystring: listQuery,
  response: {
    200: { ...many, headers: { ...paginationHeaders, ...deprecationHeaders } },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const showStudentInExamSchema = {
  tags: deprecatedTags,
  deprecated: true,
  summary: 'Deprecated: GET /student_sessions/:id, for a session of this exam',
  headers: v3Headers,
  params: idParam(),
  querystring: sessionIdQuery,
  response: {
    200: { ...one, headers: deprecationHeaders },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const showStudentLiteralSchema = {
  tags: deprecatedTags,
  deprecated: true,
  summary:
    'Deprecated (path as written in the reference, with the literal segment "id"): GET /student_sessions/:id',
  headers: v3Headers,
  querystring: sessionIdQuery,
  response: {
    200: { ...one, headers: deprecationHeaders },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const addStudentSchema = {
  tags: deprecatedTags,
  deprecated: true,
  summary: 'Deprecated: POST /exams/:exam_id/student_sessions',
  headers: v3Headers,
  params: idParam(),
  body: createInput,
  response: {
    201: { ...created, headers: deprecationHeaders },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const deleteStudentSchema = {
  tags: deprecatedTags,
  deprecated: true,
  summary: 'Deprecated: DELETE /student_sessions/:id, for a session of this exam',
  headers: v3Headers,
  params: idParam(),
  querystring: sessionIdQuery,
  response: {
    200: { ...emptyObject, headers: deprecationHeaders },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
