/**
 * The exam editor's form: every setting of the V3 exam record as the inputs hold it (texts for text
 * and number inputs, booleans for checkboxes, local times for datetime-local inputs), the
 * conversions to and from the API, and the words the screen uses for each field. The service
 * judges every value; nothing here refuses anything.
 */
import { isLocale, LANGUAGE_NAMES, LOCALES } from '../../../../src/i18n/locales.ts';
import { t } from '../../../shared/i18n.svelte.ts';
import { formatLocale } from './format-locale.ts';
import type { paths } from '../../../shared/api-schema';
import { cookieBody } from './cookie-body';
import { fromLocalInput, toLocalInput } from './time';
import { wordsRecord } from './words';

export type ExamRecord =
  paths['/api/v3/exams/{id}']['get']['responses'][200]['content']['application/json']['exam'];

/** What a create sends, as the generated client names it (signing fields included, see cookie-body.ts). */
type CreateBody = paths['/api/v3/exams']['post']['requestBody']['content']['application/json'];
type UpdateBody = NonNullable<
  paths['/api/v3/exams/{id}']['patch']['requestBody']
>['content']['application/json'];

export const EXAM_TYPES = ['demo', 'classroom', 'record_review', 'live_proctoring'] as const;
export type ExamType = (typeof EXAM_TYPES)[number];

/** The statuses a client may set (`deleted` only comes from deleting). */
export const SETTABLE_STATUSES = ['draft', 'open', 'closed'] as const;
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

/** The recording profile's levels, cheapest first (docs/recordings.md, "Recording profile"). */
export const RECORDING_QUALITIES = ['low', 'standard', 'high'] as const;
export type RecordingQuality = (typeof RECORDING_QUALITIES)[number];

/** The languages the service supports for an exam and its candidates (src/i18n/locales.ts). */
export const EXAM_LANGUAGES = LOCALES;

/** The checkbox settings of an exam, in the order the record lists them. */
export const EXAM_FLAGS = [
  'use_duration',
  'mobile_cam',
  'web_cam',
  'screen_share',
  'for_reviewing',
  'upload_answers',
  'allow_websites',
  'allow_external_applications',
  'allow_textbooks',
  'allow_calculator',
  'allow_pen_paper',
  'allow_additional',
  'global_proctoring',
  'global_reviewing',
  'live_id_check',
  'record_during_breaks',
  'extra_time_beyond_end',
] as const;
export type ExamFlag = (typeof EXAM_FLAGS)[number];

/** The free-text settings of an exam. */
export const EXAM_TEXTS = [
  'restrictions',
  'allowed_websites',
  'allowed_external_applications',
  'allowed_textbooks',
  'allowed_calculator_type',
  'allowed_additional',
  'terms',
] as const;
export type ExamText = (typeof EXAM_TEXTS)[number];

/** The waits of the automated flags the form edits, in seconds (docs/automated-flags.md). */
export const FLAG_SECONDS = [
  'no_face_seconds',
  'looking_away_seconds',
  'multiple_faces_seconds',
  'speech_seconds',
] as const;
export type FlagSeconds = (typeof FLAG_SECONDS)[number];

/** The yes/no thresholds of the automated flags the form edits. */
export const FLAG_SWITCHES = ['speech_forbidden', 'face_match'] as const;
export type FlagSwitch = (typeof FLAG_SWITCHES)[number];

/**
 * The exam's `flag_settings` as the inputs hold them: the seconds as typed (empty: the service's
 * default), the switches, and every other key the service sent (kept as it is, so saving the form
 * changes only what the form shows).
 */
export type FlagSettingsForm = { [K in FlagSeconds]: string } & { [K in FlagSwitch]: boolean } & {
  kept: Record<string, unknown>;
};

export type ExamForm = {
  name: string;
  type: ExamType;
  status: SettableStatus;
  exam_language: string;
  /** The languages candidates may be shown, ticked; all ticked means every language (null to the API). */
  candidate_languages: string[];
  timezone: string;
  /** Whole minutes as typed. */
  duration_minutes: string;
  /** `datetime-local` values in the viewer's zone. */
  start_time: string;
  end_time: string;
  /** Whether the candidate's device runs the detectors (docs/automated-flags.md). */
  automated_flags: boolean;
  flag_settings: FlagSettingsForm;
  /** How much the recordings take per candidate-hour. */
  recording_quality: RecordingQuality;
} & { [K in ExamFlag]: boolean } & { [K in ExamText]: string };

/** The words the screen shows for each field (message keys, read on each use), also used to name a field the service refused. */
export const FIELD_LABELS: Readonly<Record<string, string>> = wordsRecord({
  name: 'console.examForm.name',
  type: 'console.examSettings.type',
  status: 'console.examStatus.heading',
  exam_language: 'console.examSettings.language',
  candidate_languages: 'console.examSettings.candidateLanguages',
  timezone: 'console.examSettings.timezone',
  use_duration: 'console.examSettings.useDuration',
  duration_minutes: 'console.examSettings.duration',
  start_time: 'console.examSettings.startTime',
  end_time: 'console.examSettings.endTime',
  web_cam: 'console.examSettings.webCam',
  screen_share: 'console.examSettings.screenShare',
  mobile_cam: 'console.examSettings.mobileCam',
  allow_calculator: 'console.examAids.calculatorLabel',
  allowed_calculator_type: 'console.examAids.calculatorDetailLabel',
  allow_textbooks: 'console.examAids.textbooksLabel',
  allowed_textbooks: 'console.examAids.textbooksDetailLabel',
  allow_websites: 'console.examAids.websitesLabel',
  allowed_websites: 'console.examAids.websitesDetailLabel',
  allow_pen_paper: 'console.examAids.penPaperLabel',
  allow_external_applications: 'console.examAids.externalApplicationsLabel',
  allowed_external_applications: 'console.examAids.externalApplicationsDetailLabel',
  allow_additional: 'console.examAids.additionalLabel',
  allowed_additional: 'console.examAids.additionalDetailLabel',
  upload_answers: 'console.examSettings.uploadAnswers',
  for_reviewing: 'console.examSettings.forReviewing',
  global_proctoring: 'console.examSettings.globalProctoring',
  global_reviewing: 'console.examSettings.globalReviewing',
  live_id_check: 'console.examSettings.liveIdCheck',
  record_during_breaks: 'console.examSettings.recordDuringBreaks',
  extra_time_beyond_end: 'console.examSettings.extraTimeBeyondEnd',
  recording_quality: 'console.examSettings.recordingQuality',
  restrictions: 'console.examSettings.restrictions',
  terms: 'console.examSettings.terms',
  archived: 'console.examForm.archived',
  automated_flags: 'console.examFlags.legend',
  flag_settings: 'console.examForm.flagSettings',
  no_face_seconds: 'console.examForm.noFaceSeconds',
  looking_away_seconds: 'console.examForm.lookingAwaySeconds',
  multiple_faces_seconds: 'console.examForm.multipleFacesSeconds',
  speech_forbidden: 'console.examFlags.speechForbidden',
  speech_seconds: 'console.examForm.speechSeconds',
  face_match: 'console.examFlags.faceMatch',
  // The service may name a threshold inside the object.
  'flag_settings.no_face_seconds': 'console.examForm.noFaceSeconds',
  'flag_settings.looking_away_seconds': 'console.examForm.lookingAwaySeconds',
  'flag_settings.multiple_faces_seconds': 'console.examForm.multipleFacesSeconds',
  'flag_settings.speech_forbidden': 'console.examFlags.speechForbidden',
  'flag_settings.speech_seconds': 'console.examForm.speechSeconds',
  'flag_settings.face_match': 'console.examFlags.faceMatch',
});

/**
 * The service's message for one threshold, whichever way the answer names it (`no_face_seconds`,
 * `flag_settings.no_face_seconds`), or undefined.
 */
export function flagSettingError(
  errors: Record<string, string>,
  key: FlagSeconds | FlagSwitch,
): string | undefined {
  return errors[`flag_settings.${key}`] ?? errors[key];
}

/** Empty thresholds: each follows the service's default until one is typed. */
function newFlagSettings(): FlagSettingsForm {
  return {
    no_face_seconds: '',
    looking_away_seconds: '',
    multiple_faces_seconds: '',
    speech_seconds: '',
    speech_forbidden: false,
    face_match: true,
    kept: {},
  };
}

/** The form's thresholds for a stored exam's `flag_settings` (the effective ones: defaults filled in). */
function flagSettingsToForm(settings: Readonly<Record<string, unknown>> | null): FlagSettingsForm {
  const form = newFlagSettings();
  if (settings === null) return form;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if ((FLAG_SECONDS as readonly string[]).includes(key)) {
      form[key as FlagSeconds] = typeof value === 'number' || typeof value === 'string' ? String(value) : '';
    } else if ((FLAG_SWITCHES as readonly string[]).includes(key)) {
      form[key as FlagSwitch] = value === true;
    } else {
      kept[key] = value;
    }
  }
  form.kept = kept;
  return form;
}

/** `flag_settings` as a create or an update sends it, as an object. */
type FlagSettingsBody = Exclude<NonNullable<CreateBody['flag_settings']>, string>;

/**
 * `flag_settings` as the API reads it: the kept keys, the switches, and each number typed (an
 * empty one left out, so the default applies). When a typed value is not a number, the object goes
 * as JSON text (which the service also reads), so the service names the key it refuses.
 */
function flagSettingsValue(form: FlagSettingsForm): FlagSettingsBody | string {
  const value: Record<string, unknown> = { ...form.kept };
  for (const key of FLAG_SWITCHES) value[key] = form[key];
  let unreadable = false;
  for (const key of FLAG_SECONDS) {
    const typed = form[key].trim();
    if (typed === '') continue;
    const number = /^\d+(\.\d+)?$/.test(typed) ? Number(typed) : undefined;
    unreadable ||= number === undefined;
    value[key] = number ?? typed;
  }
  return unreadable ? JSON.stringify(value) : value;
}

/** The types whose point is a recording: the console starts them with webcam, screen and review on. */
export const RECORDED_TYPES: readonly ExamType[] = ['record_review', 'live_proctoring'];

/** The recording settings a new exam of `type` starts with in the console. */
export type RecordingDefaults = Pick<ExamForm, 'web_cam' | 'screen_share' | 'for_reviewing'>;

/**
 * What the console proposes for a new exam of `type`: webcam, screen and "send recordings to
 * reviewers" on for a recorded type, off (the API's defaults) otherwise. The API keeps its own
 * defaults (all off) for clients that leave the fields out.
 */
export function recordingDefaults(type: ExamType): RecordingDefaults {
  const on = RECORDED_TYPES.includes(type);
  return { web_cam: on, screen_share: on, for_reviewing: on };
}

/**
 * A new exam's type changed from `from` to `to`: the recording settings follow the new type's
 * defaults while they still are the old type's (nobody changed them by hand); otherwise they stay.
 */
export function changeNewExamType(form: ExamForm, from: ExamType, to: ExamType): void {
  form.type = to;
  const old = recordingDefaults(from);
  const untouched = (Object.keys(old) as (keyof RecordingDefaults)[]).every((key) => form[key] === old[key]);
  if (untouched) Object.assign(form, recordingDefaults(to));
}

/**
 * Why saving `form` deserves a second look: a recorded type that records nothing, or a
 * record-and-review exam whose recordings no reviewer is sent. Returns the sentences (empty: none).
 */
export function recordingWarnings(form: ExamForm): string[] {
  if (!RECORDED_TYPES.includes(form.type)) return [];
  const warnings: string[] = [];
  if (!form.web_cam && !form.screen_share && !form.mobile_cam) {
    warnings.push(t('console.examForm.nothingRecorded'));
  }
  if (form.type === 'record_review' && !form.for_reviewing) {
    warnings.push(t('console.examForm.noReviewers'));
  }
  return warnings;
}

/** The checkbox settings a new exam starts with ticked (the service's defaults). */
const FLAGS_ON_BY_DEFAULT: readonly ExamFlag[] = [
  'use_duration',
  'record_during_breaks',
  'extra_time_beyond_end',
];

/**
 * A blank form for a new exam, with the viewer's time zone: a draft (opened when it is ready), of
 * type record and review with that type's recording defaults; every other setting the service's
 * default.
 */
export function newExamForm(zone: string, language = 'en'): ExamForm {
  return {
    name: '',
    type: 'record_review',
    status: 'draft',
    exam_language: language,
    candidate_languages: [...EXAM_LANGUAGES],
    timezone: zone,
    duration_minutes: '',
    start_time: '',
    end_time: '',
    automated_flags: false,
    flag_settings: newFlagSettings(),
    recording_quality: 'standard',
    ...(Object.fromEntries(EXAM_FLAGS.map((flag) => [flag, FLAGS_ON_BY_DEFAULT.includes(flag)])) as {
      [K in ExamFlag]: boolean;
    }),
    ...(Object.fromEntries(EXAM_TEXTS.map((text) => [text, ''])) as { [K in ExamText]: string }),
    ...recordingDefaults('record_review'),
  };
}

/** The form for a stored exam. */
export function examToForm(exam: ExamRecord): ExamForm {
  const form = newExamForm(exam.timezone, exam.exam_language);
  form.name = exam.name;
  form.type = exam.type;
  form.status = exam.status === 'deleted' ? 'closed' : exam.status;
  form.candidate_languages = candidateLanguagesToForm(exam.candidate_languages ?? null);
  form.duration_minutes = exam.duration_minutes === null ? '' : String(exam.duration_minutes);
  form.start_time = toLocalInput(exam.start_time);
  form.end_time = toLocalInput(exam.end_time);
  for (const flag of EXAM_FLAGS) form[flag] = exam[flag];
  form.automated_flags = exam.automated_flags;
  form.flag_settings = flagSettingsToForm(exam.flag_settings);
  form.recording_quality = exam.recording_quality;
  for (const text of EXAM_TEXTS) form[text] = exam[text] ?? '';
  return form;
}

/** A local time as the API reads it: UTC ISO, null for none, the raw text when unreadable (the service names it). */
function timeValue(value: string): string | null {
  if (value === '') return null;
  return fromLocalInput(value) ?? value;
}

/** The settings the form holds, as the API's fields (every one, so the exam is exactly what is shown). */
function formValues(form: ExamForm): Omit<CreateBody, 'timestamp' | 'nonce' | 'signature'> {
  const duration = form.duration_minutes.trim();
  return {
    name: form.name,
    type: form.type,
    exam_language: form.exam_language,
    candidate_languages: candidateLanguagesValue(form.candidate_languages),
    timezone: form.timezone,
    duration_minutes: duration === '' ? null : /^\d+$/.test(duration) ? Number(duration) : duration,
    start_time: timeValue(form.start_time),
    end_time: timeValue(form.end_time),
    automated_flags: form.automated_flags,
    flag_settings: flagSettingsValue(form.flag_settings),
    recording_quality: form.recording_quality,
    ...(Object.fromEntries(EXAM_FLAGS.map((flag) => [flag, form[flag]])) as { [K in ExamFlag]: boolean }),
    ...(Object.fromEntries(
      EXAM_TEXTS.map((text) => [text, form[text].trim() === '' ? null : form[text]]),
    ) as {
      [K in ExamText]: string | null;
    }),
  };
}

/** The body of `POST /api/v3/exams` for the form (the status included). */
export function createBody(form: ExamForm): CreateBody {
  return cookieBody<CreateBody>({ ...formValues(form), status: form.status });
}

/** The body of `PATCH /api/v3/exams/{id}` for the form (status and archived have their own actions). */
export function updateBody(form: ExamForm): UpdateBody {
  return cookieBody<UpdateBody>(formValues(form));
}

/** A body that changes only the given fields (status and archive actions). */
export function changeBody(changes: { status?: SettableStatus; archived?: boolean }): UpdateBody {
  return cookieBody<UpdateBody>(changes);
}

/** The ticked languages of a stored list: every language for null (the service's "all"). */
function candidateLanguagesToForm(languages: readonly string[] | null): string[] {
  return languages === null ? [...EXAM_LANGUAGES] : [...languages];
}

/**
 * The ticked languages as the API reads them: null when every language is ticked, so languages the
 * service adds later are offered too; otherwise the list in the service's order (an empty list is
 * sent as it is, for the service to refuse with its message).
 */
function candidateLanguagesValue(ticked: readonly string[]): string[] | null {
  const known = EXAM_LANGUAGES.filter((language) => ticked.includes(language));
  const others = ticked.filter((language) => !(EXAM_LANGUAGES as readonly string[]).includes(language));
  if (others.length === 0 && known.length === EXAM_LANGUAGES.length) return null;
  return [...known, ...others];
}

/**
 * A language by its own name, as a reader looks for their language in a list: "Deutsch" for a
 * language the service offers, else Intl's name in that language with the tag ("português (pt)"),
 * or the tag alone.
 */
export function languageName(tag: string): string {
  if (isLocale(tag)) return LANGUAGE_NAMES[tag];
  try {
    const name = new Intl.DisplayNames(tag, { type: 'language' }).of(tag);
    return name === undefined || name === tag ? tag : `${name} (${tag})`;
  } catch {
    return tag;
  }
}

/** The IANA time zones the browser knows, with UTC and `current` (an alias the exam may hold) included. */
export function timeZoneChoices(current: string): string[] {
  const zones = new Set(Intl.supportedValuesOf('timeZone'));
  zones.add('UTC');
  if (current !== '') zones.add(current);
  return [...zones].sort((a, b) => a.localeCompare(b));
}

/** The local time `iso` shows in `zone` ("23 Nov 2026, 14:05 CET"), or undefined when it cannot. */
export function timeInZone(iso: string | null, zone: string): string | undefined {
  if (iso === null) return undefined;
  try {
    return new Intl.DateTimeFormat(formatLocale(), {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: zone,
      timeZoneName: 'short',
    }).format(new Date(iso));
  } catch {
    return undefined;
  }
}
