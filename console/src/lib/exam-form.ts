/**
 * The exam editor's form: every setting of the V3 exam record as the inputs hold it (texts for text
 * and number inputs, booleans for checkboxes, local times for datetime-local inputs), the
 * conversions to and from the API, and the words the screen uses for each field. The service
 * judges every value; nothing here refuses anything.
 */
import type { paths } from './api-schema';
import { cookieBody } from './cookie-body';
import { fromLocalInput, toLocalInput } from './time';

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

/** The languages the service supports for an exam (src/domain/languages.ts). */
export const EXAM_LANGUAGES = ['en', 'de', 'fr', 'it', 'es', 'nl'] as const;

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

export type ExamForm = {
  name: string;
  type: ExamType;
  status: SettableStatus;
  exam_language: string;
  timezone: string;
  /** Whole minutes as typed. */
  duration_minutes: string;
  /** `datetime-local` values in the viewer's zone. */
  start_time: string;
  end_time: string;
} & { [K in ExamFlag]: boolean } & { [K in ExamText]: string };

/** The words the screen shows for each field, also used to name a field the service refused. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  name: 'Exam name',
  type: 'Exam type',
  status: 'Status',
  exam_language: 'Language',
  timezone: 'Time zone',
  use_duration: 'The exam has a time limit',
  duration_minutes: 'Time limit in minutes',
  start_time: 'Window opens',
  end_time: 'Window closes',
  web_cam: 'Webcam and microphone',
  screen_share: 'Screen',
  mobile_cam: 'Mobile phone camera',
  allow_calculator: 'Calculator',
  allowed_calculator_type: 'Which calculator',
  allow_textbooks: 'Textbooks',
  allowed_textbooks: 'Which textbooks',
  allow_websites: 'Websites',
  allowed_websites: 'Which websites',
  allow_pen_paper: 'Pen and paper',
  allow_external_applications: 'Other applications',
  allowed_external_applications: 'Which applications',
  allow_additional: 'Something else',
  allowed_additional: 'What else',
  upload_answers: 'Students hand in answer files',
  for_reviewing: 'Send recordings to reviewers',
  global_proctoring: "Any of the institute's proctors may proctor",
  global_reviewing: "Any of the institute's reviewers may review",
  live_id_check: 'Proctor checks ID live before admitting',
  restrictions: 'Instructions for the reviewer',
  terms: 'Terms the student accepts',
  archived: 'Archived',
};

/** A blank form for a new exam: the service's own defaults, with the viewer's time zone. */
export function newExamForm(zone: string, language = 'en'): ExamForm {
  return {
    name: '',
    type: 'record_review',
    status: 'open',
    exam_language: language,
    timezone: zone,
    duration_minutes: '',
    start_time: '',
    end_time: '',
    ...(Object.fromEntries(EXAM_FLAGS.map((flag) => [flag, flag === 'use_duration'])) as {
      [K in ExamFlag]: boolean;
    }),
    ...(Object.fromEntries(EXAM_TEXTS.map((text) => [text, ''])) as { [K in ExamText]: string }),
  };
}

/** The form for a stored exam. */
export function examToForm(exam: ExamRecord): ExamForm {
  const form = newExamForm(exam.timezone, exam.exam_language);
  form.name = exam.name;
  form.type = exam.type;
  form.status = exam.status === 'deleted' ? 'closed' : exam.status;
  form.duration_minutes = exam.duration_minutes === null ? '' : String(exam.duration_minutes);
  form.start_time = toLocalInput(exam.start_time);
  form.end_time = toLocalInput(exam.end_time);
  for (const flag of EXAM_FLAGS) form[flag] = exam[flag];
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
    timezone: form.timezone,
    duration_minutes: duration === '' ? null : /^\d+$/.test(duration) ? Number(duration) : duration,
    start_time: timeValue(form.start_time),
    end_time: timeValue(form.end_time),
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

/** A language's name in the viewer's language ("German (de)"), or the tag alone. */
export function languageName(tag: string): string {
  try {
    const name = new Intl.DisplayNames(undefined, { type: 'language' }).of(tag);
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
    return new Intl.DateTimeFormat(undefined, {
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
