// The page catalogues the web build makes from messages/ (web/i18n/messages-plugin.ts).
declare module 'virtual:messages/*' {
  import type { Messages } from '../../src/i18n/translate.ts';
  import type { PageLocale } from '../../src/i18n/locales.ts';
  export const loaders: Readonly<Record<PageLocale, () => Promise<{ default: Messages }>>>;
}
