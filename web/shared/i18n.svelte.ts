/**
 * The page's language, for every browser page: which catalogue is loaded, and `t()` to read a
 * message from it. A page starts it once (startLanguage) before mounting, with the loaders of its
 * own catalogue (`virtual:messages/<page>`); switching language later (a language menu) loads the
 * other catalogue and re-renders every message in place, without a reload.
 */
import { isPageLocale, PSEUDO_LOCALE, textDirection, type PageLocale } from '../../src/i18n/locales.ts';
import { Translator, type Messages, type MessageValues, type RichPart } from '../../src/i18n/translate.ts';

export type { MessageValues, RichPart } from '../../src/i18n/translate.ts';

/** A page's catalogue loaders, one per language (from `virtual:messages/<page>`). */
export type CatalogueLoaders = Readonly<Record<PageLocale, () => Promise<{ default: Messages }>>>;

let loaders: CatalogueLoaders | undefined;
let overrides: Readonly<Partial<Record<string, Messages>>> = {};
/** The catalogues loaded so far (a cache, not page state). */
const loaded: Partial<Record<PageLocale, Messages>> = {};
let current = $state.raw(new Translator('en', {}));

/** The language the page shows now. */
export function currentLocale(): PageLocale {
  const { locale } = current;
  return isPageLocale(locale) ? locale : 'en';
}

/** A message of the page's catalogue as text, its placeholders filled in. Reactive in components. */
export function t(key: string, values?: MessageValues): string {
  return current.t(key, values);
}

/** A message with tags as parts (see web/shared/RichText.svelte). Reactive in components. */
export function rich(key: string, values?: MessageValues): RichPart[] {
  return current.rich(key, values);
}

/** The Intl locale for dates and numbers (English's for the pseudo-locale). */
export function intlLocale(): string {
  const locale = currentLocale();
  return locale === PSEUDO_LOCALE ? 'en' : locale;
}

/**
 * Shows the page in `locale`: loads its catalogue (once per language), then sets `lang` and `dir`
 * on <html> and re-renders the messages. Institute overrides given at start apply in every language.
 */
export async function useLanguage(locale: PageLocale): Promise<void> {
  if (loaders === undefined) throw new Error('startLanguage() has not run');
  const messages = loaded[locale] ?? (await loaders[locale]()).default;
  loaded[locale] = messages;
  current = new Translator(locale, messages, overrides[locale] ?? {});
  document.documentElement.lang = locale;
  document.documentElement.dir = textDirection(locale);
}

/**
 * Starts the page's language: the one the server chose and wrote on <html lang> (else English),
 * with the institute's overrides per language when the page has them.
 */
export async function startLanguage(
  pageLoaders: CatalogueLoaders,
  institutesOverrides: Readonly<Partial<Record<string, Messages>>> = {},
): Promise<void> {
  loaders = pageLoaders;
  overrides = institutesOverrides;
  const written = document.documentElement.lang;
  await useLanguage(isPageLocale(written) ? written : 'en');
}

/** Adds overrides once they are known (e.g. from the room's view, after the page started). */
export function setOverrides(institutesOverrides: Readonly<Partial<Record<string, Messages>>>): void {
  overrides = institutesOverrides;
  const locale = currentLocale();
  const messages = loaded[locale];
  if (messages !== undefined) current = new Translator(locale, messages, overrides[locale] ?? {});
}
