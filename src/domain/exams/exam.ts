import { Invalid, ParamMissing } from '../errors.ts';
import {
  has,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalString,
  optionalTime,
  type Params,
  requiredOnCreate,
} from '../input.ts';
import { readLanguage, readLanguageList } from '../languages.ts';
import type { ListFields } from '../listing.ts';
import { ianaTimeZone } from '../time-zones.ts';
import { readFlagSettings, type StoredFlagSettings } from '../flags/settings.ts';

/** The longest exam name accepted (printed in every report and email; docs/security.md, "H1"). */
export const EXAM_NAME_MAX = 200;

export const EXAM_TYPES = ['demo', 'classroom', 'record_review', 'live_proctoring'] as const;
export type ExamType = (typeof EXAM_TYPES)[number];

/** `deleted` is reached only by destroying an exam; clients may set the other three. */
export const EXAM_STATUSES = ['draft', 'open', 'closed', 'deleted'] as const;
export type ExamStatus = (typeof EXAM_STATUSES)[number];
const SETTABLE_STATUSES = ['draft', 'open', 'closed'] as const;

/**
 * How much the room and the phone record per candidate-hour (step 18, docs/recordings.md,
 * "Recording profile"): `standard` (the default) under 100 MB for webcam and screen together.
 */
export const RECORDING_QUALITIES = ['low', 'standard', 'high'] as const;
export type RecordingQuality = (typeof RECORDING_QUALITIES)[number];
export const DEFAULT_RECORDING_QUALITY: RecordingQuality = 'standard';

/** Boolean exam settings: domain name → API and column name. */
export const EXAM_FLAGS = {
  useDuration: 'use_duration',
  mobileCam: 'mobile_cam',
  webCam: 'web_cam',
  screenShare: 'screen_share',
  forReviewing: 'for_reviewing',
  uploadAnswers: 'upload_answers',
  allowWebsites: 'allow_websites',
  allowExternalApplications: 'allow_external_applications',
  allowTextbooks: 'allow_textbooks',
  allowCalculator: 'allow_calculator',
  allowPenPaper: 'allow_pen_paper',
  allowAdditional: 'allow_additional',
  // Read by clients of the original service (step 7); stored, no rule of the service acts on them.
  globalProctoring: 'global_proctoring',
  globalReviewing: 'global_reviewing',
  archived: 'archived',
  // An Invigil addition (step 10): in a live_proctoring exam, a proctor admits each candidate from
  // the setup after checking the ID live (docs/api-live.md).
  liveIdCheck: 'live_id_check',
  // Step 12: the room runs the automated flags' detectors (docs/automated-flags.md).
  automatedFlags: 'automated_flags',
  // Step 17 (docs/accommodations.md): whether the streams keep recording during a rest break, and
  // whether extra time may run past the exam's end_time. Both default to true.
  recordDuringBreaks: 'record_during_breaks',
  extraTimeBeyondEnd: 'extra_time_beyond_end',
} as const;
export type ExamFlag = keyof typeof EXAM_FLAGS;

/** Free-text exam settings: domain name → API and column name. */
export const EXAM_TEXTS = {
  restrictions: 'restrictions',
  allowedWebsites: 'allowed_websites',
  allowedExternalApplications: 'allowed_external_applications',
  allowedTextbooks: 'allowed_textbooks',
  allowedCalculatorType: 'allowed_calculator_type',
  allowedAdditional: 'allowed_additional',
  terms: 'terms',
} as const;
export type ExamText = keyof typeof EXAM_TEXTS;

/** Everything a client can set on an exam. */
export type ExamAttributes = {
  readonly name: string;
  readonly type: ExamType;
  readonly status: ExamStatus;
  readonly durationMinutes: number | null;
  readonly startTime: number | null;
  readonly endTime: number | null;
  /** A supported BCP 47 tag (src/domain/languages.ts) when written through the API. */
  readonly examLanguage: string;
  /** The languages a candidate may be shown (supported BCP 47 tags); null for every language. */
  readonly candidateLanguages: readonly string[] | null;
  /** An IANA time zone name. */
  readonly timezone: string;
  /** The automated flags' thresholds the exam sets; null for the defaults (flags/settings.ts). */
  readonly flagSettings: StoredFlagSettings | null;
  /** The recording profile's level (RECORDING_QUALITIES). */
  readonly recordingQuality: RecordingQuality;
} & { readonly [K in ExamFlag]: boolean } & { readonly [K in ExamText]: string | null };

export type Exam = ExamAttributes & {
  readonly id: number;
  readonly instituteId: number;
  readonly userId: number;
  readonly comanagerIds: readonly number[];
  readonly createdAt: number;
  readonly updatedAt: number;
};

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type ExamChanges = Partial<Mutable<ExamAttributes>>;

/** Filterable and sortable exam fields. */
export const EXAM_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  type: { column: 'type', type: 'string', notNull: true },
  status: { column: 'status', type: 'string', notNull: true },
  user_id: { column: 'user_id', type: 'integer', notNull: true },
  duration_minutes: { column: 'duration_minutes', type: 'integer' },
  start_time: { column: 'start_time', type: 'time' },
  end_time: { column: 'end_time', type: 'time' },
  global_proctoring: { column: 'global_proctoring', type: 'boolean', notNull: true },
  global_reviewing: { column: 'global_reviewing', type: 'boolean', notNull: true },
  archived: { column: 'archived', type: 'boolean', notNull: true },
  automated_flags: { column: 'automated_flags', type: 'boolean', notNull: true },
  exam_language: { column: 'exam_language', type: 'string', notNull: true },
  timezone: { column: 'timezone', type: 'string', notNull: true },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
};

/** A compat alias: the first name is the API's, the second an older client's spelling of it. */
function aliased(params: Params, name: string, alias: string): Params {
  if (has(params, name) || !has(params, alias)) return params;
  return { ...params, [name]: params[alias] };
}

/** An IANA time zone name, when sent; never blank. Throws Invalid naming `timezone`. */
function readTimeZone(params: Params): string | undefined {
  if (!has(params, 'timezone')) return undefined;
  const text = optionalString(params, 'timezone');
  if (text === undefined || text === null || text.trim() === '')
    throw new Invalid('timezone', "can't be blank");
  const zone = ianaTimeZone(text);
  if (zone === undefined) throw new Invalid('timezone', 'is not an IANA time zone name');
  return zone;
}

/**
 * Reads the exam settings a create or update request carries (V3 names; `duration` and
 * `upload_exam` accepted as older spellings). Returns only what was sent; throws ParamMissing or
 * Invalid naming the first bad field. Rules that span fields are checked by `checkExam`.
 */
export function readExamChanges(input: Params, mode: 'create' | 'update'): ExamChanges {
  const params = aliased(aliased(input, 'duration_minutes', 'duration'), 'upload_answers', 'upload_exam');
  const changes: ExamChanges = {};
  const name = requiredOnCreate(params, 'name', mode);
  if (name !== undefined && name.length > EXAM_NAME_MAX) {
    throw new Invalid('name', `is too long (maximum is ${EXAM_NAME_MAX} characters)`);
  }
  if (name !== undefined) changes.name = name;
  if (mode === 'create' && (params.type === undefined || params.type === null || params.type === '')) {
    throw new ParamMissing('type');
  }
  const type = optionalEnum(params, 'type', EXAM_TYPES);
  if (type !== undefined) changes.type = type;
  const status = optionalEnum(params, 'status', SETTABLE_STATUSES);
  if (status !== undefined) changes.status = status;
  const duration = optionalInteger(params, 'duration_minutes', 1, 100_000);
  if (duration !== undefined) changes.durationMinutes = duration;
  const startTime = optionalTime(params, 'start_time');
  if (startTime !== undefined) changes.startTime = startTime;
  const endTime = optionalTime(params, 'end_time');
  if (endTime !== undefined) changes.endTime = endTime;
  const examLanguage = readLanguage(params, 'exam_language');
  if (examLanguage !== undefined) changes.examLanguage = examLanguage;
  const candidateLanguages = readLanguageList(params, 'candidate_languages');
  if (candidateLanguages !== undefined) changes.candidateLanguages = candidateLanguages;
  const timezone = readTimeZone(params);
  if (timezone !== undefined) changes.timezone = timezone;
  const flagSettings = readFlagSettings(params);
  if (flagSettings !== undefined) changes.flagSettings = flagSettings;
  const recordingQuality = optionalEnum(params, 'recording_quality', RECORDING_QUALITIES);
  if (recordingQuality !== undefined) changes.recordingQuality = recordingQuality;
  for (const [key, field] of Object.entries(EXAM_FLAGS) as [ExamFlag, string][]) {
    const value = optionalBoolean(params, field);
    if (value !== undefined) changes[key] = value;
  }
  for (const [key, field] of Object.entries(EXAM_TEXTS) as [ExamText, string][]) {
    const value = optionalString(params, field);
    if (value !== undefined) changes[key] = value;
  }
  return changes;
}

/** The exam flags that are on unless a client turns them off. */
const FLAGS_ON_BY_DEFAULT: readonly string[] = ['useDuration', 'recordDuringBreaks', 'extraTimeBeyondEnd'];

/**
 * The defaults of a new exam, before the request's own values: open, flags off but `use_duration`,
 * `record_during_breaks` and `extra_time_beyond_end`, no texts, the institute's language
 * (`language`), UTC and the standard recording quality.
 */
export function newExamDefaults(language: string): Omit<ExamAttributes, 'name' | 'type'> {
  const flags = Object.fromEntries(
    Object.keys(EXAM_FLAGS).map((key) => [key, FLAGS_ON_BY_DEFAULT.includes(key)]),
  ) as {
    [K in ExamFlag]: boolean;
  };
  const texts = Object.fromEntries(Object.keys(EXAM_TEXTS).map((key) => [key, null])) as {
    [K in ExamText]: string | null;
  };
  return {
    status: 'open',
    durationMinutes: null,
    startTime: null,
    endTime: null,
    examLanguage: language,
    candidateLanguages: null,
    timezone: 'UTC',
    flagSettings: null,
    recordingQuality: DEFAULT_RECORDING_QUALITY,
    ...flags,
    ...texts,
  };
}

/** Checks the rules that involve several fields of the exam as it will be saved; throws ParamMissing or Invalid. */
export function checkExam(exam: ExamAttributes): void {
  if (exam.useDuration && exam.durationMinutes === null) throw new ParamMissing('duration_minutes');
  if (exam.startTime !== null && exam.endTime !== null && exam.endTime < exam.startTime) {
    throw new Invalid('end_time', 'must be after start_time');
  }
}

/**
 * The `mode` of the original service: eight characters, each `0` or `1`, one position per exam
 * type. The public Python wrapper (gbaelen/ProctorExam-python-api-wrapper, `Exam.get_exam_type`)
 * reads position 4 as live proctoring and position 3 as record & review, and anything else as a
 * classroom exam; positions 1 (demo) and 2 (classroom) continue that order of the type list, and
 * 0, 5, 6 and 7 are always `0` (docs/api-v3-exams.md). Returns the string for `type`.
 */
export function examMode(type: ExamType): string {
  const position = EXAM_TYPES.indexOf(type) + 1;
  return Array.from({ length: 8 }, (_unused, index) => (index === position ? '1' : '0')).join('');
}

/** Whether students can see the exam: `open` and `closed` exams are published, drafts are not. */
export function isPublished(exam: Pick<Exam, 'status'>): boolean {
  return exam.status === 'open' || exam.status === 'closed';
}
