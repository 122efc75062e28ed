import {
  createRouteSchema,
  destroyRouteSchema,
  flag,
  listRouteSchema,
  nullableString,
  nullableTime,
  showRouteSchema,
  time,
  signedParams,
  updateRouteSchema,
} from './common.schemas.ts';

const EXAM_TYPES = ['demo', 'classroom', 'record_review', 'live_proctoring'] as const;
/** The recording profile's levels (domain/exams/exam.ts RECORDING_QUALITIES). */
const RECORDING_QUALITIES = ['low', 'standard', 'high'] as const;

const seconds = (description: string) =>
  ({ type: 'integer', minimum: 1, maximum: 600, description: `${description} (whole seconds)` }) as const;

/** The automated flags' thresholds (src/domain/flags/settings.ts), every key present as in force. */
export const flagSettingsRecord = {
  type: 'object',
  description:
    'The automated flags’ thresholds in force: the exam’s own values over the defaults ' +
    '(docs/automated-flags.md)',
  properties: {
    no_face_seconds: seconds('No face in view this long opens a no_face flag; default 5'),
    looking_away_seconds: seconds('The face turned away this long opens a looking_away flag; default 5'),
    multiple_faces_seconds: seconds('More than one face this long opens a multiple_faces flag; default 2'),
    speech_forbidden: {
      type: 'boolean',
      description: 'The exam forbids talking: the room listens for speech',
    },
    speech_seconds: seconds('Speech this long opens a speech flag; default 3'),
    face_match: {
      type: 'boolean',
      description: 'Compare the face in view with the face photo (face_mismatch, advisory); default true',
    },
    face_match_threshold: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: 'Similarity below which the face counts as not matching; default 0.5',
    },
    detection_hz: {
      type: 'number',
      minimum: 0.5,
      maximum: 10,
      description: 'Detections per second the room aims for; default 2 (a slow device lowers it)',
    },
  },
  required: [
    'no_face_seconds',
    'looking_away_seconds',
    'multiple_faces_seconds',
    'speech_forbidden',
    'speech_seconds',
    'face_match',
    'face_match_threshold',
    'detection_hz',
  ],
} as const;

/** The same keys as input: every one optional; the ones left out follow the defaults. */
const flagSettingsInput = {
  anyOf: [
    { type: 'object', properties: flagSettingsRecord.properties, additionalProperties: false },
    { type: 'string', description: 'The same object as JSON text (a form)' },
    { type: 'null' },
  ],
  default: null,
  description:
    'The automated flags’ thresholds: any of the keys, each optional (left out: the default). Replaces the ' +
    'stored thresholds as a whole; null or empty returns to the defaults. A form sends it as JSON text. ' +
    "422 names the key, e.g. 'flag_settings.no_face_seconds'",
} as const;

/** The languages a candidate may be shown, as input. */
const candidateLanguagesInput = {
  anyOf: [
    { type: 'array', items: { type: 'string' }, minItems: 1 },
    { type: 'string', description: 'The same tags separated by commas (a form)' },
    { type: 'null' },
  ],
  description:
    'The languages a candidate of the exam may be shown (docs/languages.md): supported BCP 47 tags, each ' +
    'language once; null or empty for every supported language. 422 on an empty list, a repeated ' +
    "language ('must not name a language twice'), a malformed tag ('is not a valid language tag') or " +
    "an unsupported one ('is not included in the list')",
  example: ['en', 'nl'],
} as const;

export const examRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    user_id: { type: 'integer', description: 'The user who created the exam' },
    name: { type: 'string' },
    type: { type: 'string', enum: EXAM_TYPES },
    mode: {
      type: 'string',
      pattern: '^[01]{8}$',
      description:
        'Derived from type, as the original service wrote it: eight 0/1 characters with a 1 at position ' +
        '1 (demo), 2 (classroom), 3 (record_review) or 4 (live_proctoring), counted from 0',
      example: '00010000',
    },
    live_proctoring: { type: 'boolean', description: 'Derived: type is live_proctoring' },
    status: { type: 'string', enum: ['draft', 'open', 'closed', 'deleted'] },
    published: { type: 'boolean', description: 'Derived: status is open or closed' },
    duration_minutes: { type: ['integer', 'null'] },
    start_time: nullableTime,
    end_time: nullableTime,
    exam_language: { type: 'string', description: 'A supported BCP 47 language tag', example: 'en' },
    candidate_languages: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description:
        'The languages a candidate may be shown (docs/languages.md), supported BCP 47 tags; null for every language',
      example: ['en', 'nl'],
    },
    timezone: { type: 'string', description: 'An IANA time zone name', example: 'Europe/Amsterdam' },
    use_duration: flag,
    mobile_cam: flag,
    web_cam: flag,
    screen_share: flag,
    for_reviewing: flag,
    upload_answers: flag,
    allow_websites: flag,
    allow_external_applications: flag,
    allow_textbooks: flag,
    allow_calculator: flag,
    allow_pen_paper: flag,
    allow_additional: flag,
    global_proctoring: flag,
    global_reviewing: flag,
    archived: flag,
    live_id_check: {
      ...flag,
      description:
        'An Invigil addition: in a live_proctoring exam a proctor admits each candidate from the setup after ' +
        'checking the ID live (docs/api-live.md)',
    },
    automated_flags: {
      ...flag,
      description:
        'Step 12: the room runs the automated flags’ detectors on the candidate’s device ' +
        '(docs/automated-flags.md). Flags are advisory: a person decides',
    },
    record_during_breaks: {
      ...flag,
      description:
        'Step 17: the streams keep recording while a candidate takes a rest break (true, the default); ' +
        'false pauses them for the break (docs/accommodations.md)',
    },
    extra_time_beyond_end: {
      ...flag,
      description:
        "Step 17: a student's extra time may run past the exam's end_time (true, the default); false: " +
        'end_time ends every session (docs/accommodations.md)',
    },
    flag_settings: flagSettingsRecord,
    recording_quality: {
      type: 'string',
      enum: RECORDING_QUALITIES,
      description:
        'Step 18: how much the room records per candidate-hour (docs/recordings.md, ' +
        '"Recording profile"): low, standard (the default, under 100 MB for webcam and screen) or high (about ' +
        '240 MB). On a slow line the room steps down one level by itself',
    },
    restrictions: nullableString,
    allowed_websites: nullableString,
    allowed_external_applications: nullableString,
    allowed_textbooks: nullableString,
    allowed_calculator_type: nullableString,
    allowed_additional: nullableString,
    terms: nullableString,
    comanager_ids: { type: 'array', items: { type: 'integer' } },
    practice_url: {
      type: ['string', 'null'],
      format: 'uri',
      description:
        "A demo exam's public practice link an institute may put on its website (docs/practice.md); null for other types",
    },
    created_at: time,
    updated_at: time,
  },
} as const;

/** A boolean input: JSON true/false, or the texts true, false, 1, 0 (forms and queries). */
const flagInput = (description: string, fallback = false) =>
  ({
    type: ['boolean', 'string', 'integer'],
    enum: [true, false, 'true', 'false', '1', '0', 1, 0],
    default: fallback,
    description,
  }) as const;

const textInput = (description: string) =>
  ({
    type: ['string', 'null'],
    default: null,
    description: `${description}; empty or null clears it`,
  }) as const;

const timeInput = {
  type: ['string', 'integer', 'null'],
  default: null,
  description:
    'ISO 8601 (no zone: UTC), a date (midnight UTC), or epoch seconds/milliseconds; null clears it',
} as const;

/** Every exam field a create or update reads (domain/exams/exam.ts readExamChanges). */
const examInput = {
  type: 'object',
  properties: {
    ...signedParams,
    name: { type: 'string', minLength: 1, description: 'At most 200 characters (longer: 422)' },
    type: { type: 'string', enum: EXAM_TYPES },
    status: { type: 'string', enum: ['draft', 'open', 'closed'], default: 'open' },
    duration_minutes: {
      type: ['integer', 'string', 'null'],
      minimum: 1,
      maximum: 100000,
      description: 'Whole minutes; required when use_duration is true',
    },
    duration: { type: ['integer', 'string', 'null'], description: 'Older spelling of duration_minutes' },
    use_duration: flagInput('The exam has a time limit (duration_minutes)', true),
    start_time: timeInput,
    end_time: { ...timeInput, description: `${timeInput.description}; not before start_time` },
    exam_language: {
      type: 'string',
      description:
        "A supported BCP 47 tag (docs/api-v3-exams.md), case-insensitive; default: the institute's default_language",
    },
    candidate_languages: candidateLanguagesInput,
    timezone: {
      type: 'string',
      default: 'UTC',
      description: 'An IANA time zone name such as Europe/Amsterdam',
    },
    mobile_cam: flagInput('Students also record with a phone'),
    web_cam: flagInput('Students record their webcam'),
    screen_share: flagInput('Students share their screen'),
    for_reviewing: flagInput('Recordings go to reviewers'),
    upload_answers: flagInput('Students hand in files at the end'),
    upload_exam: flagInput('Older spelling of upload_answers'),
    allow_websites: flagInput('Websites are allowed (allowed_websites lists them)'),
    allow_external_applications: flagInput('Other applications are allowed'),
    allow_textbooks: flagInput('Textbooks are allowed'),
    allow_calculator: flagInput('A calculator is allowed'),
    allow_pen_paper: flagInput('Pen and paper are allowed'),
    allow_additional: flagInput('Something else is allowed (allowed_additional)'),
    global_proctoring: flagInput("The institute's proctors may proctor this exam"),
    global_reviewing: flagInput("The institute's reviewers may review this exam"),
    archived: flagInput('A label for exams kept for the record; changes nothing else'),
    live_id_check: flagInput(
      'In a live_proctoring exam, a proctor admits each candidate after checking the ID live (docs/api-live.md)',
    ),
    automated_flags: flagInput(
      'The room runs the automated flags’ detectors on the candidate’s device (docs/automated-flags.md)',
    ),
    record_during_breaks: flagInput(
      'The streams keep recording during a rest break; false pauses them (docs/accommodations.md)',
      true,
    ),
    extra_time_beyond_end: flagInput(
      "A student's extra time may run past end_time; false: end_time ends every session (docs/accommodations.md)",
      true,
    ),
    flag_settings: flagSettingsInput,
    recording_quality: {
      type: 'string',
      enum: RECORDING_QUALITIES,
      default: 'standard',
      description:
        'low, standard or high (docs/recordings.md, "Recording profile"); another value: 422 \'is not included in the list\'',
    },
    restrictions: textInput('Instructions for the reviewer'),
    allowed_websites: textInput('Comma-separated'),
    allowed_external_applications: textInput('Comma-separated'),
    allowed_textbooks: textInput('Comma-separated'),
    allowed_calculator_type: textInput('Free text'),
    allowed_additional: textInput('Comma-separated'),
    terms: textInput('Terms the student accepts'),
  },
} as const;

const tags = ['exams'];
const one = { type: 'object', properties: { exam: examRecord } } as const;

export const listExamsSchema = listRouteSchema(
  {
    tags,
    summary: 'List exams',
    description:
      'Filter/sort fields: id, name, type, status, user_id, duration_minutes, start_time, end_time, ' +
      'global_proctoring, global_reviewing, archived, automated_flags, exam_language, timezone, created_at, updated_at. ' +
      'Deleted exams appear only when filtering on status. `like` applies to the text fields (name, type, status, ' +
      'exam_language, timezone) only. ' +
      'Time operands take the same forms as time inputs, years 0000 to 9999. In a sort, null sorts after every value ' +
      '(last ascending, first descending) on both databases.',
  },
  'exams',
  examRecord,
);

export const showExamSchema = showRouteSchema({ tags, summary: 'Show an exam' }, one);

export const createExamSchema = createRouteSchema({ tags, summary: 'Create an exam' }, one, {
  ...examInput,
  required: ['name', 'type', 'timestamp', 'nonce', 'signature'],
});

/** The update reads the same fields, but applies no defaults: what is not sent stays as it is. */
const examChanges = {
  ...examInput,
  properties: Object.fromEntries(
    Object.entries(examInput.properties).map(([name, property]) => {
      const { default: _unused, ...rest } = property as { default?: unknown };
      return [name, rest];
    }),
  ),
};

export const updateExamSchema = updateRouteSchema({ tags, summary: 'Update an exam' }, one, examChanges);

export const destroyExamSchema = destroyRouteSchema({
  tags,
  summary: 'Destroy an exam (its status becomes deleted)',
});
