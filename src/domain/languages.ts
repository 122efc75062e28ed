import { LOCALES } from '../i18n/locales.ts';
import { Invalid } from './errors.ts';
import { has, optionalString, param, type Params } from './input.ts';

/**
 * The languages an institute, exam or student may name (`default_language`, `exam_language`,
 * `language`, `candidate_languages`): the primary language subtags of BCP 47 with a complete message
 * catalogue (src/i18n/locales.ts), so whatever is stored can be shown.
 */
export const SUPPORTED_LANGUAGES: readonly string[] = LOCALES;

/**
 * A BCP 47 tag of the shape the service keeps: a language, then optionally a script and a region
 * (`en`, `de-CH`, `zh-Hant-TW`, `es-419`); `_` is read as `-`, as older clients write `pt_BR`.
 */
const LANGUAGE_TAG = /^([A-Za-z]{2,3})(?:[-_]([A-Za-z]{4}))?(?:[-_]([A-Za-z]{2}|\d{3}))?$/;

type TagProblem = 'is not a valid language tag' | 'is not included in the list';

/** The tag in canonical case (`de-CH`), or what is wrong with it. */
function parseTag(text: string): { readonly tag: string } | { readonly problem: TagProblem } {
  const match = LANGUAGE_TAG.exec(text);
  if (match === null) return { problem: 'is not a valid language tag' };
  const [, language = '', script, region] = match;
  const primary = language.toLowerCase();
  if (!SUPPORTED_LANGUAGES.includes(primary)) return { problem: 'is not included in the list' };
  const parts = [primary];
  if (script !== undefined) parts.push(`${script.slice(0, 1).toUpperCase()}${script.slice(1).toLowerCase()}`);
  if (region !== undefined) parts.push(region.toUpperCase());
  return { tag: parts.join('-') };
}

/** Returns `text` as a supported tag in canonical case, or undefined when it is none. */
export function canonicalLanguage(text: string): string | undefined {
  const parsed = parseTag(text);
  return 'tag' in parsed ? parsed.tag : undefined;
}

/**
 * Reads the language tag in `params[field]` when sent: never blank (Invalid `can't be blank`),
 * well-formed (Invalid `is not a valid language tag`) and of a supported language (Invalid `is not
 * included in the list`), each naming `field`. Returns it in canonical case, or undefined when absent.
 */
export function readLanguage(params: Params, field: string): string | undefined {
  if (!has(params, field)) return undefined;
  const value = optionalString(params, field);
  if (value === undefined || value === null || value.trim() === '')
    throw new Invalid(field, "can't be blank");
  const parsed = parseTag(value.trim());
  if ('problem' in parsed) throw new Invalid(field, parsed.problem);
  return parsed.tag;
}

/**
 * As readLanguage, for a field that may be cleared: null or blank reads as null. Returns the tag in
 * canonical case, null, or undefined when absent; throws Invalid naming `field`.
 */
export function readNullableLanguage(params: Params, field: string): string | null | undefined {
  if (!has(params, field)) return undefined;
  const value = optionalString(params, field);
  if (value === undefined || value === null || value.trim() === '') return null;
  const parsed = parseTag(value.trim());
  if ('problem' in parsed) throw new Invalid(field, parsed.problem);
  return parsed.tag;
}

function primaryOf(tag: string): string {
  return tag.split('-')[0] ?? tag;
}

/** The most languages a list may name (every supported one, each once). */
const LANGUAGE_LIST_MAX = 50;

/**
 * Reads a list of supported languages (an exam's `candidate_languages`): an array of tags, or a
 * comma-separated text as a form sends it; null (or an empty text) for every language. Each tag is
 * checked as readLanguage checks one (Invalid `is not a valid language tag`, `is not included in the
 * list`), the list must not be empty (Invalid `can't be empty`) nor name a language twice, even in
 * two regional forms (Invalid `must not name a language twice`), each naming `field`. Returns the canonical tags in the order
 * sent, null, or undefined when absent.
 */
export function readLanguageList(params: Params, field: string): readonly string[] | null | undefined {
  if (!has(params, field)) return undefined;
  const value = param(params, field);
  if (value === null || value === '') return null;
  let items: readonly unknown[];
  if (Array.isArray(value)) items = value;
  else if (typeof value === 'string') items = value.split(',');
  else throw new Invalid(field, 'must be an array of language tags');
  if (items.length === 0) throw new Invalid(field, "can't be empty");
  if (items.length > LANGUAGE_LIST_MAX) throw new Invalid(field, 'names too many languages');
  const tags: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new Invalid(field, 'must be an array of language tags');
    const parsed = parseTag(item.trim());
    if ('problem' in parsed) throw new Invalid(field, parsed.problem);
    // `de` and `de-CH` name one language: the pages are chosen by the primary subtag.
    if (tags.some((tag) => primaryOf(tag) === primaryOf(parsed.tag)))
      throw new Invalid(field, 'must not name a language twice');
    tags.push(parsed.tag);
  }
  return tags;
}
