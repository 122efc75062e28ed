/**
 * A student's accommodations and practice run as the console shows and edits them
 * (docs/accommodations.md): the record's `accommodations` object, the form the student screen and
 * the bulk edit hold it in (texts as typed, so the service names what it refuses), the words for
 * the list, the live wall and the review screen, and the readiness of a practice run. The service
 * judges every value; nothing here refuses anything.
 */
// With extensions: node runs this file as it is in the unit tests (test/console/accommodations.test.ts).
import { EXEMPT_CHECKS, type ExemptCheck } from '../../../shared/exempt-checks.ts';
import { t } from '../../../shared/i18n.svelte.ts';
import { formatLocale } from './format-locale.ts';
import { formatTime } from './time.ts';

export { EXEMPT_CHECKS, type ExemptCheck } from '../../../shared/exempt-checks.ts';

/** The accommodations object of a student record (and of the live monitor's sessions). */
export interface AccommodationsRecord {
  readonly extra_time_minutes: number;
  readonly extra_time_percent: number;
  readonly breaks: { readonly count: number; readonly minutes: number } | null;
  readonly exemptions: readonly { readonly check: string; readonly reason: string }[];
  readonly assistive_technology: boolean;
  readonly note: string | null;
}

/** A practice run's outcome as the student record has it. */
export const PRACTICE_STATUSES = ['not_tried', 'running', 'passed', 'failed'] as const;
export type PracticeStatus = (typeof PRACTICE_STATUSES)[number];

export interface PracticeRecord {
  readonly status: PracticeStatus;
  readonly failed_check: string | null;
  readonly at: string | null;
}

/**
 * The step 17 fields of a student record. Read through these narrow types so a screen works with
 * a record whether or not its generated type lists them yet.
 */
export interface AccommodatedFields {
  readonly accommodations?: AccommodationsRecord | null;
  readonly practice?: PracticeRecord | null;
  readonly on_break?: boolean;
  readonly breaks_taken?: number;
  readonly deadline_at?: string | null;
}

/** The record's accommodations, or null when it has none at all. */
export function accommodationsOf(record: object): AccommodationsRecord | null {
  const value = (record as AccommodatedFields).accommodations;
  return value === undefined || value === null || !isAccommodated(value) ? null : value;
}

/** The record's practice run (never tried when it says nothing). */
export function practiceOf(record: object): PracticeRecord {
  const value = (record as AccommodatedFields).practice;
  return value ?? { status: 'not_tried', failed_check: null, at: null };
}

/** True when the object grants anything (extra time, breaks, an exemption, assistive technology, a note). */
export function isAccommodated(record: AccommodationsRecord): boolean {
  return (
    record.extra_time_minutes > 0 ||
    record.extra_time_percent > 0 ||
    record.breaks !== null ||
    record.exemptions.length > 0 ||
    record.assistive_technology ||
    (record.note ?? '') !== ''
  );
}

const CHECK_WORDS: Readonly<Record<ExemptCheck, string>> = {
  webcam: 'console.accommodations.checkWebcam',
  microphone: 'console.accommodations.checkMicrophone',
  screen_share: 'console.accommodations.checkScreenShare',
  mobile: 'console.accommodations.checkMobile',
  id_photo: 'console.accommodations.checkIdPhoto',
  face_photo: 'console.accommodations.checkFacePhoto',
  fullscreen: 'console.accommodations.checkFullscreen',
};

/** A check in words ("Webcam"); one this console does not know reads as its name with spaces. */
export function checkWords(check: string): string {
  const key = (CHECK_WORDS as Readonly<Record<string, string>>)[check];
  return key === undefined ? check.replaceAll('_', ' ') : t(key);
}

/** "50% + 10 min" for the extra time, or "" for none. */
export function extraTimeWords(record: AccommodationsRecord): string {
  const { extra_time_minutes: minutes, extra_time_percent: percent } = record;
  if (minutes > 0 && percent > 0) return t('console.accommodations.extraBoth', { percent, minutes });
  if (percent > 0) return t('console.accommodations.extraPercent', { percent });
  if (minutes > 0) return t('console.accommodations.extraMinutes', { minutes });
  return '';
}

/**
 * The accommodations in short phrases, for a badge's text or a tile's name: the extra time, the
 * breaks, the exemptions (checks only: the reasons are for the review screen), assistive technology.
 */
export function accommodationPhrases(record: AccommodationsRecord): string[] {
  const phrases: string[] = [];
  const extra = extraTimeWords(record);
  if (extra !== '') phrases.push(t('console.accommodations.extraTime', { extra }));
  if (record.breaks !== null) {
    phrases.push(
      t('console.accommodations.breaksShort', { count: record.breaks.count, minutes: record.breaks.minutes }),
    );
  }
  if (record.exemptions.length > 0) {
    phrases.push(
      t('console.accommodations.exemptShort', {
        checks: record.exemptions.map((exemption) => checkWords(exemption.check)).join(', '),
      }),
    );
  }
  if (record.assistive_technology) phrases.push(t('console.accommodations.assistiveShort'));
  if ((record.note ?? '') !== '') phrases.push(t('console.accommodations.noteShort'));
  return phrases;
}

/** The readiness of a practice run in words: "Not tried", "Passed (28 Nov, 14:05 CET)", "Failed: Webcam (…)". */
export function practiceWords(practice: PracticeRecord): string {
  const when = formatTime(practice.at);
  switch (practice.status) {
    case 'passed':
      return t('console.practice.passed', { when });
    case 'failed':
      return t('console.practice.failed', {
        check: practice.failed_check === null ? '—' : checkWords(practice.failed_check),
        when,
      });
    case 'running':
      return t('console.practice.running', { when });
    default:
      return t('console.practice.notTried');
  }
}

/** The exemption of one check as the form holds it. */
export interface ExemptionForm {
  on: boolean;
  reason: string;
}

/** The accommodations as the inputs hold them (numbers as typed; empty is zero or none). */
export interface AccommodationsForm {
  extra_time_minutes: string;
  extra_time_percent: string;
  breaks_count: string;
  breaks_minutes: string;
  exemptions: Record<ExemptCheck, ExemptionForm>;
  assistive_technology: boolean;
  note: string;
}

/** The keys of the API object, which the bulk edit chooses among. */
export const ACCOMMODATION_KEYS = [
  'extra_time_minutes',
  'extra_time_percent',
  'breaks',
  'exemptions',
  'assistive_technology',
  'note',
] as const;
export type AccommodationKey = (typeof ACCOMMODATION_KEYS)[number];

/** A form with nothing granted. */
export function emptyAccommodationsForm(): AccommodationsForm {
  return {
    extra_time_minutes: '',
    extra_time_percent: '',
    breaks_count: '',
    breaks_minutes: '',
    exemptions: Object.fromEntries(
      EXEMPT_CHECKS.map((check) => [check, { on: false, reason: '' }]),
    ) as Record<ExemptCheck, ExemptionForm>,
    assistive_technology: false,
    note: '',
  };
}

/** The form for a stored record's accommodations (none: an empty form). */
export function accommodationsToForm(record: AccommodationsRecord | null): AccommodationsForm {
  const form = emptyAccommodationsForm();
  if (record === null) return form;
  form.extra_time_minutes = record.extra_time_minutes > 0 ? String(record.extra_time_minutes) : '';
  form.extra_time_percent = record.extra_time_percent > 0 ? String(record.extra_time_percent) : '';
  form.breaks_count = record.breaks === null ? '' : String(record.breaks.count);
  form.breaks_minutes = record.breaks === null ? '' : String(record.breaks.minutes);
  for (const exemption of record.exemptions) {
    if ((EXEMPT_CHECKS as readonly string[]).includes(exemption.check)) {
      form.exemptions[exemption.check as ExemptCheck] = { on: true, reason: exemption.reason };
    }
  }
  form.assistive_technology = record.assistive_technology;
  form.note = record.note ?? '';
  return form;
}

/** A typed whole number as the API reads it: empty is 0, digits a number, anything else as typed. */
function wholeValue(typed: string): number | string {
  const text = typed.trim();
  if (text === '') return 0;
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** What the API is sent for each key of the form. */
export type AccommodationsValue = Partial<Record<AccommodationKey, unknown>>;

/**
 * The `accommodations` object a write sends for `form`: every key, or only `keys` (the bulk edit's
 * chosen ones, so the others stay as each student has them). Breaks with neither number typed are
 * none; exemptions are the ticked checks with their reasons (an empty reason is sent for the service
 * to refuse by name).
 */
export function accommodationsValue(
  form: AccommodationsForm,
  keys: readonly AccommodationKey[] = ACCOMMODATION_KEYS,
): AccommodationsValue {
  const count = form.breaks_count.trim();
  const minutes = form.breaks_minutes.trim();
  const all: Record<AccommodationKey, unknown> = {
    extra_time_minutes: wholeValue(form.extra_time_minutes),
    extra_time_percent: wholeValue(form.extra_time_percent),
    breaks:
      count === '' && minutes === ''
        ? null
        : { count: wholeValue(form.breaks_count), minutes: wholeValue(form.breaks_minutes) },
    exemptions: EXEMPT_CHECKS.filter((check) => form.exemptions[check].on).map((check) => ({
      check,
      reason: form.exemptions[check].reason.trim(),
    })),
    assistive_technology: form.assistive_technology,
    note: form.note.trim() === '' ? null : form.note,
  };
  return Object.fromEntries(keys.map((key) => [key, all[key]]));
}

/**
 * The message for one control from a refused write's field messages (fieldErrors): the service
 * names `accommodations.breaks.count`, `accommodations.exemptions[2].reason`… An exemption's index
 * is the place among the ticked checks, so it is matched back to its check here.
 */
export function accommodationError(
  errors: Readonly<Record<string, string>>,
  form: AccommodationsForm,
  control: string,
): string | undefined {
  const direct = errors[`accommodations.${control}`];
  if (direct !== undefined) return direct;
  const exemption = /^exemptions\.([a-z_]+)\.(check|reason)$/.exec(control);
  if (exemption === null) return undefined;
  const ticked = EXEMPT_CHECKS.filter((check) => form.exemptions[check].on);
  const index = ticked.indexOf(exemption[1] as ExemptCheck);
  if (index < 0) return undefined;
  return errors[`accommodations.exemptions[${index}].${exemption[2]}`];
}

/** "On break, ends 10:42" (the viewer's clock), or "On break" for a break without an end. */
export function breakWords(endsAt: string | null | undefined): string {
  const end = endsAt === null || endsAt === undefined ? Number.NaN : Date.parse(endsAt);
  if (!Number.isFinite(end)) return t('console.accommodations.onBreak');
  const time = new Intl.DateTimeFormat(formatLocale(), { hour: '2-digit', minute: '2-digit' }).format(end);
  return t('console.accommodations.onBreakUntil', { time });
}
