/** Which locale the console formats dates and numbers in (no DOM: Node tests import it too). */
import { intlLocale } from '../../../shared/i18n.svelte.ts';

/**
 * The locale dates and numbers are formatted in: the browser's own regional variant when it speaks
 * the console's language (an English console in a British browser writes "15 Mar 2027"), else the
 * console's language (a German console in an English browser writes German dates).
 */
export function formatLocale(): string {
  const shown = intlLocale();
  const browser = typeof navigator === 'undefined' ? shown : navigator.language;
  return browser.split('-')[0]?.toLowerCase() === shown.split('-')[0] ? browser : shown;
}
