/**
 * Which language a candidate's pages speak (docs/languages.md, "How the language is chosen"): the
 * room, the phone page and the PIN page resolve it here, from what is stored about the session, its
 * exam and institute, and what the browser says. Pure: the callers read the facts and the header.
 */
import {
  allowedLocales,
  chooseLocale,
  localeOfTag,
  PSEUDO_LOCALE,
  type PageLocale,
} from '../../i18n/locales.ts';
import { Invalid } from '../errors.ts';
import { has, optionalString, type Params } from '../input.ts';

/** An institute's own wording of page messages: locale → key → ICU message. */
export type PageOverrides = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** What is stored that names a candidate's language, most particular first; each may be missing. */
export interface LanguageFacts {
  /** The candidate's own pick in a language menu (`chosen_language`). */
  readonly choice: string | null;
  /** The student session's `language`. */
  readonly student: string | null;
  /** The exam's `exam_language`. */
  readonly exam: string | null;
  /** The institute's `default_language`. */
  readonly institute: string | null;
  /** The exam's `candidate_languages`; null for every language. */
  readonly allowed: readonly string[] | null;
}

/** What the request adds: the browser's languages, a one-off `?lang=`, and whether `en-XA` may be shown. */
export interface LanguageRequest {
  readonly acceptLanguage?: string | null | undefined;
  /** A page's `?lang=` for that load only; ignored when it names no language the candidate may see. */
  readonly override?: string | null | undefined;
  /** The PSEUDO_LOCALE setting. */
  readonly pseudo: boolean;
}

/** The language a candidate's page shows, and the ones its language menu offers. */
export interface CandidateLanguage {
  readonly current: PageLocale;
  readonly available: readonly PageLocale[];
}

/** What a candidate's page needs before its script runs: the exam's name and the language facts. */
export interface CandidatePage {
  readonly examName: string;
  readonly languageFacts: LanguageFacts;
}

/** The facts of a session of an exam of an institute (no facts for a page that has no session yet). */
export function languageFacts(
  session: { readonly language: string | null; readonly chosenLanguage: string | null } | null,
  exam: { readonly examLanguage: string; readonly candidateLanguages: readonly string[] | null } | null,
  instituteLanguage: string | null,
): LanguageFacts {
  return {
    choice: session?.chosenLanguage ?? null,
    student: session?.language ?? null,
    exam: exam?.examLanguage ?? null,
    institute: instituteLanguage,
    allowed: exam?.candidateLanguages ?? null,
  };
}

/** The languages a candidate may be shown: the exam's list (every language without one), then `en-XA` when on. */
export function availableLanguages(facts: Pick<LanguageFacts, 'allowed'>, pseudo: boolean): PageLocale[] {
  const locales: PageLocale[] = allowedLocales(facts.allowed);
  return pseudo ? [...locales, PSEUDO_LOCALE] : locales;
}

/** `tag` as a language the candidate may be shown, or undefined when it is none. */
function offered(tag: string | null | undefined, available: readonly PageLocale[]): PageLocale | undefined {
  const locale = localeOfTag(tag);
  return locale !== undefined && available.includes(locale) ? locale : undefined;
}

/**
 * The candidate's language: the page's `?lang=` when offered, else the first of their own pick →
 * the session's `language` → the exam's → the institute's → Accept-Language → English (or the
 * exam's first language) that the exam allows. Returns it with the languages offered.
 */
export function resolveCandidateLanguage(facts: LanguageFacts, request: LanguageRequest): CandidateLanguage {
  const available = availableLanguages(facts, request.pseudo);
  const forced = offered(request.override, available);
  const current =
    forced ??
    chooseLocale({
      choice: facts.choice,
      student: facts.student,
      exam: facts.exam,
      institute: facts.institute,
      acceptLanguage: request.acceptLanguage,
      allowed: facts.allowed,
      pseudo: request.pseudo,
    });
  return { current, available };
}

/** The 422 detail for a language the exam does not offer. */
export const LANGUAGE_NOT_OFFERED = 'is not offered for this exam';

/**
 * Reads the candidate's pick (`language`) from a language menu. Returns the locale to store; throws
 * Invalid naming `language`: `can't be blank` when missing or blank, `is not a valid language tag`,
 * or `is not offered for this exam` for a language the service does not speak or the exam leaves out.
 */
export function readLanguageChoice(params: Params, facts: LanguageFacts, pseudo: boolean): PageLocale {
  const value = has(params, 'language') ? optionalString(params, 'language') : undefined;
  if (value === undefined || value === null || value.trim() === '')
    throw new Invalid('language', "can't be blank");
  if (localeOfTag(value) === undefined && !/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/.test(value.trim()))
    throw new Invalid('language', 'is not a valid language tag');
  const locale = offered(value, availableLanguages(facts, pseudo));
  if (locale === undefined) throw new Invalid('language', LANGUAGE_NOT_OFFERED);
  return locale;
}
