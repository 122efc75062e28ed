/**
 * The console's language. The console's page is static (its <html lang> is always "en"), so the
 * browser decides: a `?lang=` in the address (tests, the pseudo-locale), else the user's preference
 * (My account: kept with the user by the service, PUT /auth/language, and in this browser for the
 * sign-in page), else the browser's languages, else English. Once signed in, the preference the
 * service keeps wins over this browser's.
 */
import { chooseLocale, localeOfTag, PSEUDO_LOCALE, type PageLocale } from '../../../../src/i18n/locales.ts';
import { currentLocale, useLanguage } from '../../../shared/i18n.svelte.ts';
import { api } from './api';

/** Where My account keeps the chosen language in this browser. */
const STORAGE_KEY = 'invigil.console.language';

function storedPreference(): string | null {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage may be off (privacy settings): the browser's languages decide then.
    return null;
  }
}

function remember(locale: PageLocale): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, locale);
  } catch {
    // Not remembered: the console still switches for this visit.
  }
}

/** The language the address asks for (`?lang=`), which wins over every preference. */
function askedInAddress(): PageLocale | undefined {
  return localeOfTag(new URLSearchParams(window.location.search).get('lang'));
}

/** The language the console starts in (see the module comment); never throws. */
export function consoleLocale(): PageLocale {
  const asked = askedInAddress();
  if (asked !== undefined) return asked;
  const stored = localeOfTag(storedPreference());
  if (stored !== undefined) return stored;
  return chooseLocale({ acceptLanguage: navigator.languages.join(',') });
}

/**
 * Shows the console in `locale` at once and keeps it as the user's language: in this browser, and
 * with the user on the service (every browser they sign in with, and their emails). The
 * pseudo-locale is kept in this browser only. Resolves when the new catalogue is shown and the
 * service has answered (rejects when the catalogue could not be loaded).
 */
export async function setConsoleLanguage(locale: PageLocale): Promise<void> {
  remember(locale);
  await useLanguage(locale);
  // Kept for the user when signed in; without a session (sign-in page) this browser keeps it.
  if (locale !== PSEUDO_LOCALE) await api.PUT('/auth/language', { body: { language: locale } });
}

/**
 * Follows the language the service keeps for the signed-in user (GET /auth/session), unless the
 * address asks for another: the console switches to it and this browser remembers it.
 */
export async function followUserLanguage(language: string | null | undefined): Promise<void> {
  if (askedInAddress() !== undefined) return;
  const locale = localeOfTag(language);
  if (locale === undefined || locale === PSEUDO_LOCALE || locale === currentLocale()) return;
  remember(locale);
  await useLanguage(locale);
}
