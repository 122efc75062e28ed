/**
 * Text of another direction inside a message: a time, a clock reading, a name or an address put into
 * an Arabic sentence keeps its own order when isolated (what <bdi> does in markup, for text that
 * goes through t() as a value or into an attribute).
 */
import { textDirection } from '../../../../src/i18n/locales.ts';
import { currentLocale } from '../../../shared/i18n.svelte.ts';

/**
 * Returns `text` between the Unicode first-strong isolate and its pop when the page reads right to
 * left, so it keeps its own direction there; as it is in a left-to-right language, where a clock
 * reading or a time needs no help (and the text stays exactly what it was). Reactive in components.
 */
export function isolate(text: string): string {
  return textDirection(currentLocale()) === 'rtl' ? `\u2068${text}\u2069` : text;
}
