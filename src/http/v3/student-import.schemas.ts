import { MAX_IGNORED_FIELDS, MAX_IMPORT_ROWS } from '../../domain/student-sessions/student-import.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';
import { createStudentSchema, studentRecord } from './student-sessions.schemas.ts';

const tags = ['student sessions'];

/** The fields of the single create (POST /exams/:exam_id/student_sessions), without the signed ones. */
function createFields(): Record<string, unknown> {
  const body = createStudentSchema.body as { properties: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(body.properties).filter(([name]) => !Object.hasOwn(signedParams, name)),
  );
}

/** One row of an import: what the single create accepts, plus a name in two parts. */
const importRow = {
  type: 'object',
  description:
    'The fields of POST /exams/:exam_id/student_sessions, checked by the same rules. Other fields are ' +
    'ignored and named in `ignored_fields` (`student_id` is filled by the exam room; a student number ' +
    'goes in `external_id`).',
  properties: {
    ...createFields(),
    first_name: { type: 'string', description: 'With last_name, the name when `name` is absent' },
    last_name: { type: 'string', description: 'With first_name, the name when `name` is absent' },
    // Accommodation columns (student-import.ts readRowAccommodations): instead of `accommodations`.
    extra_time_minutes: {
      type: ['integer', 'string'],
      description: 'Accommodation column: extra minutes, 0 to 600 (a blank cell changes nothing)',
    },
    extra_time_percent: {
      type: ['integer', 'string'],
      description: "Accommodation column: extra time in percent of the exam's duration, 0 to 300",
    },
    break_count: {
      type: ['integer', 'string'],
      description: 'Accommodation column: rest breaks allowed, 0 to 20 (0: none); needs break_minutes',
    },
    break_minutes: {
      type: ['integer', 'string'],
      description: 'Accommodation column: the longest each break may last, 1 to 240 minutes',
    },
    exemptions: {
      type: 'string',
      description:
        'Accommodation column: `check:reason` pairs separated by `;` (`webcam:no camera; id_photo:blind`), ' +
        'checks webcam, microphone, screen_share, mobile, id_photo, face_photo, fullscreen, a reason for ' +
        'each; `none` clears them',
    },
    assistive_technology: {
      type: ['boolean', 'string'],
      description: 'Accommodation column: yes or no (true/false, 1/0)',
    },
    accommodation_note: { type: 'string', description: 'Accommodation column: the staff-only note' },
  },
  required: ['email'],
} as const;

const importInput = {
  type: 'object',
  properties: {
    ...signedParams,
    students: {
      description:
        `The rows, at most ${MAX_IMPORT_ROWS}: a JSON array, or a string holding the same array as JSON ` +
        '(for form bodies, and for files whose JSON array would have more than 10 000 values in all)',
      oneOf: [
        { type: 'array', items: importRow, minItems: 1, maxItems: MAX_IMPORT_ROWS },
        { type: 'string', description: 'A JSON array of rows' },
      ],
    },
    existing: {
      type: 'string',
      enum: ['refuse', 'skip', 'update', ''],
      default: 'refuse',
      description:
        'A row whose email and attempt the exam already has: `refuse` it (the row is invalid, nothing is ' +
        "imported), `skip` it, or `update` that session with the row's other fields (name, external_id, " +
        'individual_info…). Empty reads as refuse.',
    },
    dry_run: {
      type: ['boolean', 'string', 'integer'],
      enum: [true, false, 'true', 'false', '1', '0', 1, 0],
      default: false,
      description: 'true: check every row and create nothing (200)',
    },
  },
  required: ['students', 'timestamp', 'nonce', 'signature'],
} as const;

const ignoredFields = {
  type: 'array',
  items: { type: 'string' },
  description: `Row fields no rule read, sorted (at most ${MAX_IGNORED_FIELDS})`,
} as const;

/** A created record: the full student record without `is_email_sent`, as the single create answers. */
const createdRecord = {
  ...studentRecord,
  required: Object.keys(studentRecord.properties).filter((name) => name !== 'is_email_sent'),
} as const;

const rowError = {
  type: 'object',
  properties: {
    row: { type: 'integer', minimum: 1, description: 'Position in `students`, from 1' },
    field: { type: ['string', 'null'], description: 'The refused field; null when the row is not an object' },
    message: {
      type: 'string',
      description:
        "The rule, as the single create's `errors` words it (`is invalid`, `has already been taken`, " +
        '`has already been taken by row 3` for the same email and attempt earlier in the file)',
    },
  },
} as const;

/** A refused import: `error`, and for invalid rows `row_errors` (for a refused parameter, `errors`). */
const importErrorBody = {
  ...errorBody,
  description:
    'Rows are invalid (`row_errors` names each, nothing was created), or `students` or `dry_run` is ' +
    'missing or invalid (`errors` names it)',
  properties: {
    ...errorBody.properties,
    row_errors: { type: 'array', items: rowError, description: 'Every invalid row, in row order' },
  },
  required: ['error'],
} as const;

export const importStudentsSchema = {
  tags,
  summary: 'Import many students into an exam, all or nothing',
  description:
    `Checks every row of \`students\` (at most ${MAX_IMPORT_ROWS}) with the rules of creating one student ` +
    'session (POST /exams/:exam_id/student_sessions): name (or first_name and last_name) and email ' +
    'required, the email format, the attempt rule against the sessions the exam already has and the rows ' +
    'before it, open_time within the exam, an LTI resource of the institute. The same email and attempt ' +
    'twice in the file is refused too. If any row fails: 422 with `row_errors` (each row reports its first ' +
    'problem) and nothing is created. Otherwise every session is created in one transaction: 201 with ' +
    'their records in row order. With `dry_run` true nothing is created: 200 with the values each row ' +
    'would be created with. Only those who manage the exam may import (403 otherwise; 404 ' +
    "`Couldn't find Exam with 'id'=ID` when it is missing or out of scope). The body is limited to " +
    'MAX_BODY_BYTES (default 1 MB, about 5 000 short rows).',
  headers: v3Headers,
  params: idParam('exam_id'),
  body: importInput,
  response: {
    200: {
      description: 'Dry run: every row is valid; nothing was created',
      type: 'object',
      // `updated`, `skipped` and each row's `action` only with `existing` skip or update.
      required: ['dry_run', 'count', 'rows', 'ignored_fields'],
      properties: {
        dry_run: { type: 'boolean', enum: [true] },
        count: { type: 'integer', description: 'How many sessions the import would create' },
        updated: {
          type: 'integer',
          description: 'With `existing` skip or update: how many existing sessions it would update',
        },
        skipped: {
          type: 'integer',
          description: 'With `existing` skip or update: how many rows it would skip (already registered)',
        },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            required: ['row', 'name', 'email', 'attempt'],
            properties: {
              row: { type: 'integer', minimum: 1 },
              name: { type: 'string' },
              email: { type: 'string', description: 'As it would be stored: trimmed, lower case' },
              attempt: { type: 'integer' },
              action: {
                type: 'string',
                enum: ['create', 'skip', 'update'],
                description:
                  'With `existing` skip or update: create a session, skip the row, or update the session the exam has',
              },
            },
          },
        },
        ignored_fields: ignoredFields,
      },
    },
    201: {
      description: 'Every row was created, in one transaction',
      type: 'object',
      required: ['dry_run', 'count', 'students', 'ignored_fields'],
      properties: {
        dry_run: { type: 'boolean', enum: [false] },
        count: { type: 'integer', description: 'How many sessions were created' },
        updated: {
          type: 'integer',
          description: 'With `existing` skip or update: how many existing sessions were updated',
        },
        skipped: {
          type: 'integer',
          description: 'With `existing` skip or update: how many rows were skipped (already registered)',
        },
        students: { type: 'array', items: createdRecord },
        ignored_fields: ignoredFields,
      },
    },
    404: errorBody,
    422: importErrorBody,
    ...commonErrors,
  },
} as const;
