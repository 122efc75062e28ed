/**
 * The languages the service speaks and how one is chosen for a reader. Pure: the server and the
 * browser pages both import it (the room's language menu, the console's preference).
 */

/** Every language with a complete catalogue in messages/, English first (the fallback). */
export const LOCALES = ['en', 'nl', 'de', 'fr', 'es', 'it', 'ar'] as const;

export type Locale = (typeof LOCALES)[number];

/**
 * The pseudo-locale: English with accented letters, 40% longer, in brackets. It shows hard-coded
 * text and truncation in the browser tests; a server offers it only when PSEUDO_LOCALE is on.
 */
export const PSEUDO_LOCALE = 'en-XA';

/** A locale the pages can be shown in: a real one, or the pseudo-locale. */
export type PageLocale = Locale | typeof PSEUDO_LOCALE;

/** Each language's name in itself, for language menus (a reader looks for their own). */
export const LANGUAGE_NAMES: Readonly<Record<PageLocale, string>> = {
  en: 'English',
  nl: 'Nederlands',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  it: 'Italiano',
  ar: 'العربية',
  [PSEUDO_LOCALE]: '[Ƥšéûðöļöçåļé]',
};

const RIGHT_TO_LEFT: ReadonlySet<string> = new Set(['ar']);

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

export function isPageLocale(value: unknown): value is PageLocale {
  return value === PSEUDO_LOCALE || isLocale(value);
}

/** The writing direction of a locale's pages (`dir` on <html>). */
export function textDirection(locale: string): 'ltr' | 'rtl' {
  return RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr';
}

/**
 * The catalogue's locale for a stored BCP 47 tag: its primary language when the service speaks it
 * (`de-CH` → `de`, `pt-BR` → undefined). The pseudo-locale is kept as it is.
 */
export function localeOfTag(tag: string | null | undefined): PageLocale | undefined {
  if (tag === null || tag === undefined) return undefined;
  const trimmed = tag.trim().replace(/_/g, '-');
  if (trimmed.toLowerCase() === PSEUDO_LOCALE.toLowerCase()) return PSEUDO_LOCALE;
  const primary = trimmed.split('-')[0]?.toLowerCase();
  return isLocale(primary) ? primary : undefined;
}

/** At most this many ranges of an Accept-Language header are read (the rest is ignored). */
const MAX_RANGES = 32;

/**
 * The languages of an Accept-Language header, best first (`q=0` dropped, ties in the header's
 * order). Linear in the header's length, and reads at most MAX_RANGES ranges.
 */
export function acceptedLanguages(header: string | null | undefined): string[] {
  if (header === null || header === undefined || header === '') return [];
  const ranges: { tag: string; q: number; at: number }[] = [];
  for (const [at, part] of header.split(',', MAX_RANGES).entries()) {
    const [tag = '', ...params] = part.trim().split(';');
    let q = 1;
    for (const param of params) {
      const [name, value] = param.trim().split('=');
      if (name?.trim() === 'q' && value !== undefined) q = Number(value.trim());
    }
    if (tag !== '' && Number.isFinite(q) && q > 0) ranges.push({ tag: tag.trim(), q, at });
  }
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((range) => range.tag);
}

/** Where a reader's language may come from, most particular first; each may be missing. */
export interface LanguageSources {
  /** The reader's own pick in a language menu (the candidate's, remembered for the session). */
  readonly choice?: string | null | undefined;
  /** The student session's `language`. */
  readonly student?: string | null | undefined;
  /** The exam's `exam_language`. */
  readonly exam?: string | null | undefined;
  /** The institute's `default_language`. */
  readonly institute?: string | null | undefined;
  /** The browser's Accept-Language header. */
  readonly acceptLanguage?: string | null | undefined;
  /** The languages the reader may be shown (an exam's `candidate_languages`); all when missing. */
  readonly allowed?: readonly string[] | null | undefined;
  /** Whether the pseudo-locale may be chosen (development and tests). */
  readonly pseudo?: boolean;
}

/**
 * The language to show: the first source that names an allowed language, in the order of
 * LanguageSources; then English when it is allowed, else the first allowed language.
 */
export function chooseLocale(sources: LanguageSources): PageLocale {
  const allowed = allowedLocales(sources.allowed);
  const fits = (tag: string | null | undefined): PageLocale | undefined => {
    const locale = localeOfTag(tag);
    if (locale === PSEUDO_LOCALE) return sources.pseudo === true ? locale : undefined;
    return locale !== undefined && allowed.includes(locale) ? locale : undefined;
  };
  const named = [sources.choice, sources.student, sources.exam, sources.institute];
  for (const tag of named) {
    const locale = fits(tag);
    if (locale !== undefined) return locale;
  }
  for (const tag of acceptedLanguages(sources.acceptLanguage)) {
    const locale = fits(tag);
    if (locale !== undefined) return locale;
  }
  return allowed.includes('en') ? 'en' : (allowed[0] ?? 'en');
}

/** The allowed list as locales in the service's order (every locale when the list is missing or empty). */
export function allowedLocales(allowed: readonly string[] | null | undefined): Locale[] {
  if (allowed === null || allowed === undefined) return [...LOCALES];
  const named = new Set(allowed.map((tag) => localeOfTag(tag)));
  const locales = LOCALES.filter((locale) => named.has(locale));
  return locales.length === 0 ? [...LOCALES] : locales;
}
