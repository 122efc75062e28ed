/**
 * An institute's own wording of a catalogue message (docs/languages.md, "An institute's own
 * wording"): which messages may be reworded, and the rules a new wording must follow. Pure.
 */
import { catalogue } from '../../i18n/catalogues.ts';
import { isLocale, type Locale } from '../../i18n/locales.ts';
import { messageMismatch } from '../../i18n/translate.ts';
import { Invalid, ParamMissing } from '../errors.ts';
import { has, optionalString, type Params } from '../input.ts';

/** The catalogue prefixes an institute may reword: what its candidates read and its emails say. */
export const OVERRIDABLE_PREFIXES = ['candidate.', 'room.', 'phone.', 'lti.', 'email.'] as const;

/** The prefixes the room and the phone page are sent (their views' `message_overrides`). */
export const PAGE_PREFIXES = ['candidate.', 'room.', 'phone.'] as const;

/** The longest wording accepted, in UTF-16 code units. */
export const OVERRIDE_MAX = 4000;

/** One saved wording. */
export interface MessageOverride {
  readonly instituteId: number;
  readonly locale: Locale;
  readonly key: string;
  readonly message: string;
  readonly updatedAt: number;
  readonly updatedBy: number | null;
}

/** Whether `key` is a message of the English catalogue an institute may reword. */
export function isOverridableKey(key: string): boolean {
  return OVERRIDABLE_PREFIXES.some((prefix) => key.startsWith(prefix)) && Object.hasOwn(catalogue('en'), key);
}

/** Every key an institute may reword, sorted. */
export function overridableKeys(): string[] {
  return Object.keys(catalogue('en'))
    .filter((key) => OVERRIDABLE_PREFIXES.some((prefix) => key.startsWith(prefix)))
    .sort();
}

/** Reads `locale` (required): one of the service's languages. Throws ParamMissing or Invalid naming it. */
export function readOverrideLocale(params: Params): Locale {
  const value = has(params, 'locale') ? optionalString(params, 'locale') : undefined;
  if (value === undefined || value === null || value.trim() === '') throw new ParamMissing('locale');
  const locale = value.trim().toLowerCase();
  if (!isLocale(locale)) throw new Invalid('locale', 'is not included in the list');
  return locale;
}

/** What a save asks for: the message to keep, or null to go back to the catalogue's. */
export interface OverrideChange {
  readonly locale: Locale;
  readonly key: string;
  readonly message: string | null;
}

/**
 * Reads a save: `locale`, `key` (a message of the English catalogue under OVERRIDABLE_PREFIXES;
 * Invalid `is not a message an institute may reword`) and `message` (empty or absent: delete the
 * override; at most OVERRIDE_MAX characters; it must parse and use the same placeholders and tags as
 * the catalogue's message in that language, else Invalid with messageMismatch's sentence). Returns
 * the change; throws ParamMissing or Invalid naming the field.
 */
export function readOverrideChange(params: Params): OverrideChange {
  const locale = readOverrideLocale(params);
  const key = has(params, 'key') ? optionalString(params, 'key') : undefined;
  if (key === undefined || key === null || key.trim() === '') throw new ParamMissing('key');
  if (!isOverridableKey(key)) throw new Invalid('key', 'is not a message an institute may reword');
  const message = has(params, 'message') ? optionalString(params, 'message') : undefined;
  if (message === undefined || message === null || message.trim() === '')
    return { locale, key, message: null };
  if (message.length > OVERRIDE_MAX)
    throw new Invalid('message', `is too long (maximum is ${OVERRIDE_MAX} characters)`);
  const reference = catalogue(locale)[key] ?? catalogue('en')[key] ?? '';
  const mismatch = messageMismatch(message, reference);
  if (mismatch !== undefined) throw new Invalid('message', mismatch);
  return { locale, key, message };
}
