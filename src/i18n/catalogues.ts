/**
 * The message catalogues on the server: messages/<locale>.json, one file per language, read once
 * when first needed. The emails, the PDF report and the server's own pages translate through them;
 * the browser pages get the same files, split per page by the web build (web/i18n/messages-plugin.ts).
 */
import { readFileSync } from 'node:fs';
import { LOCALES, PSEUDO_LOCALE, type Locale, type PageLocale } from './locales.ts';
import { pseudoMessages, Translator, type Messages } from './translate.ts';

/** The folder of the catalogues, beside src/. */
export const MESSAGES_DIR = new URL('../../messages/', import.meta.url);

const catalogues = new Map<PageLocale, Messages>();

function readCatalogue(locale: Locale): Messages {
  const parsed: unknown = JSON.parse(readFileSync(new URL(`${locale}.json`, MESSAGES_DIR), 'utf8'));
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`messages/${locale}.json is not an object of messages`);
  const messages: Record<string, string> = {};
  for (const [key, message] of Object.entries(parsed))
    if (typeof message === 'string') messages[key] = message;
    else throw new Error(`messages/${locale}.json: ${key} is not a string`);
  return messages;
}

/** A language's whole catalogue (the pseudo-locale's is made from the English one). */
export function catalogue(locale: PageLocale): Messages {
  const known = catalogues.get(locale);
  if (known !== undefined) return known;
  const messages = locale === PSEUDO_LOCALE ? pseudoMessages(catalogue('en')) : readCatalogue(locale);
  catalogues.set(locale, messages);
  return messages;
}

/** Every real language's catalogue, English first. */
export function allCatalogues(): ReadonlyMap<Locale, Messages> {
  return new Map(LOCALES.map((locale) => [locale, catalogue(locale)]));
}

/** A translator for one language, with an institute's overrides for it on top. */
export function translator(locale: PageLocale, overrides: Messages = {}): Translator {
  return new Translator(locale, catalogue(locale), overrides);
}
