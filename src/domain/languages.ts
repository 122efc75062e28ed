import { Invalid } from './errors.ts';
import { has, optionalString, type Params } from './input.ts';

/**
 * The languages an institute or exam may name (`default_language`, `exam_language`): the primary
 * language subtags of BCP 47 the service is prepared for. English is the language of every template
 * today; the others are the ones exam offices of the original service used, stored for clients and
 * for translations.
 */
export const SUPPORTED_LANGUAGES: readonly string[] = ['en', 'de', 'fr', 'it', 'es', 'nl'];

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
