import { Invalid } from '../errors.ts';
import { optionalBoolean, optionalInteger, optionalString, type Params } from '../input.ts';

/**
 * A student's accommodations (step 17, docs/accommodations.md): more time, rest breaks, exemptions
 * from checks, assistive technology and a note for staff. Kept on the student session as one object;
 * the API spells it in snake case (presentAccommodations).
 */

/** The longest extra time in minutes, and the largest extra time in percent of the exam's duration. */
export const EXTRA_TIME_MINUTES_MAX = 600;
export const EXTRA_TIME_PERCENT_MAX = 300;
/** The most rest breaks, and the longest break in minutes. */
export const BREAKS_COUNT_MAX = 20;
export const BREAK_MINUTES_MAX = 240;
/** The longest exemption reason and staff note (in UTF-16 code units, as `length` counts). */
export const EXEMPTION_REASON_MAX = 500;
export const ACCOMMODATION_NOTE_MAX = 2000;

/** The checks a student may be exempted from. */
export const EXEMPT_CHECKS = [
  'webcam',
  'microphone',
  'screen_share',
  'mobile',
  'id_photo',
  'face_photo',
  'fullscreen',
] as const;
export type ExemptCheck = (typeof EXEMPT_CHECKS)[number];

/**
 * The requirement checks an exemption can stand in for: names of student-session.ts CHECK_FIELDS,
 * spelt out here as that module imports this one.
 */
export type ExemptCheckField = 'webcamCheck' | 'microphoneCheck' | 'screenshareCheck' | 'mobileCheck';

/** The requirement check an exemption stands in for, where it has one. */
export const EXEMPT_CHECK_FIELDS: Readonly<Partial<Record<ExemptCheck, ExemptCheckField>>> = {
  webcam: 'webcamCheck',
  microphone: 'microphoneCheck',
  screen_share: 'screenshareCheck',
  mobile: 'mobileCheck',
};

export interface Exemption {
  readonly check: ExemptCheck;
  /** Why, for staff only: never shown to the candidate. */
  readonly reason: string;
}

export interface BreakAllowance {
  /** How many rest breaks the candidate may take (1 or more). */
  readonly count: number;
  /** The longest each may last, in minutes (1 or more); a break not ended by then ends itself. */
  readonly minutes: number;
}

export interface Accommodations {
  readonly extraTimeMinutes: number;
  readonly extraTimePercent: number;
  /** Null: no rest breaks. */
  readonly breaks: BreakAllowance | null;
  /** At most one per check, in EXEMPT_CHECKS order. */
  readonly exemptions: readonly Exemption[];
  /** Automated flags that assistive technology sets off are recorded as informational only. */
  readonly assistiveTechnology: boolean;
  /** For proctors and reviewers only; null for none. */
  readonly note: string | null;
}

/** No accommodation at all: what a session without any has. */
export const NO_ACCOMMODATIONS: Accommodations = Object.freeze({
  extraTimeMinutes: 0,
  extraTimePercent: 0,
  breaks: null,
  exemptions: Object.freeze([]),
  assistiveTechnology: false,
  note: null,
});

/** True when the session has no accommodation (so nothing need be stored or marked). */
export function hasNoAccommodations(accommodations: Accommodations): boolean {
  return (
    accommodations.extraTimeMinutes === 0 &&
    accommodations.extraTimePercent === 0 &&
    accommodations.breaks === null &&
    accommodations.exemptions.length === 0 &&
    !accommodations.assistiveTechnology &&
    accommodations.note === null
  );
}

/** True when the session is exempt from `check`. */
export function isExempt(accommodations: Pick<Accommodations, 'exemptions'>, check: ExemptCheck): boolean {
  return accommodations.exemptions.some((exemption) => exemption.check === check);
}

/** The requirement checks (CHECK_FIELDS names) the session is exempt from. */
export function exemptCheckFields(accommodations: Pick<Accommodations, 'exemptions'>): ExemptCheckField[] {
  const fields: ExemptCheckField[] = [];
  for (const exemption of accommodations.exemptions) {
    const field = EXEMPT_CHECK_FIELDS[exemption.check];
    if (field !== undefined) fields.push(field);
  }
  return fields;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object a request sent: a JSON object, or its JSON text (forms, CSV cells). Throws Invalid. */
function objectValue(value: unknown, name: string): Record<string, unknown> {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (isPlainObject(parsed)) return parsed;
    } catch {
      // Answered below as not an object.
    }
  }
  if (isPlainObject(value)) return value;
  throw new Invalid(name, 'must be an object');
}

function arrayValue(value: unknown, name: string): unknown[] {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Answered below as not a list.
    }
  }
  if (Array.isArray(value)) return value;
  // A form sends a list as an object keyed by position ("exemptions[0][check]").
  if (isPlainObject(value)) return Object.values(value);
  throw new Invalid(name, 'must be a list');
}

function boundedText(params: Params, key: string, name: string, max: number): string | null | undefined {
  if (!Object.hasOwn(params, key)) return undefined;
  const value = optionalString({ [name]: params[key] }, name);
  if (value === undefined) return undefined;
  if (value === null || value.trim() === '') return null;
  if (value.length > max) throw new Invalid(name, `is too long (maximum is ${max} characters)`);
  return value;
}

/** A whole number from an object the request sent, under its full field name; undefined when absent. */
function memberInteger(
  raw: Params,
  key: string,
  name: string,
  min: number,
  max: number,
): number | null | undefined {
  return Object.hasOwn(raw, key) ? optionalInteger({ [name]: raw[key] }, name, min, max) : undefined;
}

function readBreaks(value: unknown, name: string): BreakAllowance | null {
  if (value === null || value === '' || value === false) return null;
  const raw = objectValue(value, name);
  const count = memberInteger(raw, 'count', `${name}.count`, 0, BREAKS_COUNT_MAX);
  const minutes = memberInteger(raw, 'minutes', `${name}.minutes`, 0, BREAK_MINUTES_MAX);
  if (count === undefined || count === null) {
    if (minutes === undefined || minutes === null || minutes === 0) return null;
    throw new Invalid(`${name}.count`, "can't be blank");
  }
  if (count === 0) return null;
  if (minutes === undefined || minutes === null || minutes === 0) {
    throw new Invalid(`${name}.minutes`, 'must be greater than or equal to 1');
  }
  return { count, minutes };
}

function readExemptions(value: unknown, name: string): Exemption[] {
  if (value === null || value === '') return [];
  const list = arrayValue(value, name);
  if (list.length > EXEMPT_CHECKS.length) throw new Invalid(name, 'lists a check more than once');
  const byCheck = new Map<ExemptCheck, Exemption>();
  list.forEach((item, index) => {
    const field = `${name}[${index}]`;
    const raw = objectValue(item, field);
    const check = EXEMPT_CHECKS.find((known) => known === raw.check);
    if (check === undefined) {
      throw new Invalid(`${field}.check`, `must be one of ${EXEMPT_CHECKS.join(', ')}`);
    }
    if (byCheck.has(check)) throw new Invalid(`${field}.check`, 'lists a check more than once');
    const reason = boundedText(raw, 'reason', `${field}.reason`, EXEMPTION_REASON_MAX);
    if (reason === undefined || reason === null) throw new Invalid(`${field}.reason`, "can't be blank");
    byCheck.set(check, { check, reason });
  });
  return EXEMPT_CHECKS.flatMap((check) => {
    const exemption = byCheck.get(check);
    return exemption === undefined ? [] : [exemption];
  });
}

/**
 * Reads the `accommodations` a create or update request carries, over `current` (the session's, or
 * NO_ACCOMMODATIONS on create): each key sent replaces the current value, keys left out keep it,
 * and `null` (or an empty value) clears everything. Keys: `extra_time_minutes` (0–600),
 * `extra_time_percent` (0–300), `breaks` ({count 0–20, minutes 1–240}; null or count 0: none),
 * `exemptions` ([{check, reason}], reason required), `assistive_technology`, `note`. Returns
 * undefined when the request has no `accommodations`; throws Invalid naming the field
 * (`accommodations.extra_time_minutes`, `accommodations.exemptions[0].check`, …).
 */
export function readAccommodations(
  params: Params,
  current: Accommodations,
  name = 'accommodations',
): Accommodations | undefined {
  if (!Object.hasOwn(params, name)) return undefined;
  const value = params[name];
  if (value === null || value === '') return NO_ACCOMMODATIONS;
  const raw = objectValue(value, name);
  const known = [
    'extra_time_minutes',
    'extra_time_percent',
    'breaks',
    'exemptions',
    'assistive_technology',
    'note',
  ];
  const unknown = Object.keys(raw).find((key) => !known.includes(key));
  // The key is echoed in the answer, so a long one is cut short.
  if (unknown !== undefined) throw new Invalid(`${name}.${unknown.slice(0, 60)}`, 'is not an accommodation');
  const minutes = memberInteger(
    raw,
    'extra_time_minutes',
    `${name}.extra_time_minutes`,
    0,
    EXTRA_TIME_MINUTES_MAX,
  );
  const percent = memberInteger(
    raw,
    'extra_time_percent',
    `${name}.extra_time_percent`,
    0,
    EXTRA_TIME_PERCENT_MAX,
  );
  const breaks = Object.hasOwn(raw, 'breaks') ? readBreaks(raw.breaks, `${name}.breaks`) : undefined;
  const exemptions = Object.hasOwn(raw, 'exemptions')
    ? readExemptions(raw.exemptions, `${name}.exemptions`)
    : undefined;
  const assistive = Object.hasOwn(raw, 'assistive_technology')
    ? (optionalBoolean(
        { [`${name}.assistive_technology`]: raw.assistive_technology },
        `${name}.assistive_technology`,
      ) ?? false)
    : undefined;
  const note = boundedText(raw, 'note', `${name}.note`, ACCOMMODATION_NOTE_MAX);
  return {
    extraTimeMinutes: minutes === undefined ? current.extraTimeMinutes : (minutes ?? 0),
    extraTimePercent: percent === undefined ? current.extraTimePercent : (percent ?? 0),
    breaks: breaks === undefined ? current.breaks : breaks,
    exemptions: exemptions ?? current.exemptions,
    assistiveTechnology: assistive ?? current.assistiveTechnology,
    note: note === undefined ? current.note : note,
  };
}

/** The accommodations as the API shows them (snake case, every key present). */
export interface AccommodationsRecord {
  extra_time_minutes: number;
  extra_time_percent: number;
  breaks: { count: number; minutes: number } | null;
  exemptions: { check: ExemptCheck; reason: string }[];
  assistive_technology: boolean;
  note: string | null;
}

/** Returns the API's (and the stored JSON's) form of `accommodations`. */
export function presentAccommodations(accommodations: Accommodations): AccommodationsRecord {
  return {
    extra_time_minutes: accommodations.extraTimeMinutes,
    extra_time_percent: accommodations.extraTimePercent,
    breaks: accommodations.breaks === null ? null : { ...accommodations.breaks },
    exemptions: accommodations.exemptions.map((exemption) => ({ ...exemption })),
    assistive_technology: accommodations.assistiveTechnology,
    note: accommodations.note,
  };
}

/** The column's text for `accommodations`: null when there are none. */
export function storedAccommodations(accommodations: Accommodations): string | null {
  return hasNoAccommodations(accommodations) ? null : JSON.stringify(presentAccommodations(accommodations));
}

/**
 * Reads the stored column back. Values written by this service are valid; anything unreadable (a
 * hand-edited row) reads as no accommodations rather than failing every page of the session.
 */
export function parseStoredAccommodations(text: string | null): Accommodations {
  if (text === null || text === '') return NO_ACCOMMODATIONS;
  try {
    return readAccommodations({ accommodations: text }, NO_ACCOMMODATIONS) ?? NO_ACCOMMODATIONS;
  } catch {
    return NO_ACCOMMODATIONS;
  }
}
