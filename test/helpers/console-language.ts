/**
 * Lets a Node test import the console's word modules (web/console/src/lib/*.ts), which read their
 * words through the browser pages' language runtime (web/shared/i18n.svelte.ts): a stand-in for
 * Svelte's `$state` rune (a plain value outside a component) and for <html>, then the console's
 * English catalogue started, so the words read as the console shows them in English.
 * Import it first, before the module under test: `import '../helpers/console-language.ts';`
 */
import { catalogue } from '../../src/i18n/catalogues.ts';
import { LOCALES, PSEUDO_LOCALE, type PageLocale } from '../../src/i18n/locales.ts';
import type { Messages } from '../../src/i18n/translate.ts';

declare global {
  // The one piece of the DOM the language runtime touches (<html lang dir>), stood in for below:
  // the Node type check of the tests that import this file has no DOM library.
  var document: { documentElement: { lang: string; dir: string } };
}

type Rune = (<T>(value: T) => T) & { raw: <T>(value: T) => T };
const rune: Rune = Object.assign(<T>(value: T): T => value, { raw: <T>(value: T): T => value });
Object.assign(globalThis, { $state: rune });
if (!('document' in globalThis))
  Object.assign(globalThis, { document: { documentElement: { lang: 'en', dir: 'ltr' } } });

/** The console's part of a language's catalogue (as web/i18n/messages-plugin.ts cuts it). */
function consoleMessages(locale: PageLocale): Messages {
  return Object.fromEntries(Object.entries(catalogue(locale)).filter(([key]) => key.startsWith('console.')));
}

const { startLanguage } = await import('../../web/shared/i18n.svelte.ts');
const loaders = Object.fromEntries(
  [...LOCALES, PSEUDO_LOCALE as PageLocale].map((locale) => [
    locale,
    () => Promise.resolve({ default: consoleMessages(locale) }),
  ]),
) as Record<PageLocale, () => Promise<{ default: Messages }>>;
await startLanguage(loaders);
