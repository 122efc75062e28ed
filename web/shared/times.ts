/**
 * Times and sizes on the candidate pages, in the page's language (web/shared/i18n.svelte.ts): a
 * moment with its zone always named, the zone a page shows times in, a countdown's reading, a size.
 */
import { knownZone, zoneLabel } from '../../src/i18n/dates.ts';
import { currentLocale, intlLocale, t } from './i18n.svelte.ts';

/**
 * The zone a candidate page shows the exam's times in: the exam's (the view's `exam.timezone`) when
 * this browser knows it, else undefined (the browser's own zone). Pass it to formatMoment and say
 * which of the two it is beside the times.
 */
export function examTimeZone(timeZone: string | null | undefined): string | undefined {
  return knownZone(timeZone);
}

/**
 * A date and time as the candidate reads it, in `timeZone` (else the browser's own; a zone this
 * browser does not know counts as none) with the zone named, e.g. "Nov 30, 2026, 09:00 AM CET" /
 * "30 nov 2026, 09:00 CET". Hours keep two digits, so times line up. Reactive in components (follows
 * the language).
 */
export function formatMoment(iso: string, timeZone?: string | null): string {
  const when = new Date(iso);
  const zone = examTimeZone(timeZone);
  const text = new Intl.DateTimeFormat(intlLocale(), {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: zone,
  }).format(when);
  return `${text} ${zoneLabel(when, currentLocale(), zone)}`;
}

/** The browser's time zone by its IANA name (`Europe/Berlin`), or 'UTC' when the browser names none. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * A size in bytes in the page's language: "512 bytes", "40 KB", "2.5 MB" (French "2,5 Mo"); megabytes
 * keep one decimal, so a size that grows reads steadily. Reactive in components.
 */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return t('candidate.size.bytes', { count: bytes });
  const number = (value: number, digits: number) =>
    new Intl.NumberFormat(intlLocale(), {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      useGrouping: false,
    }).format(value);
  if (bytes < 1024 * 1024) return t('candidate.size.kilobytes', { size: number(bytes / 1024, 0) });
  return t('candidate.size.megabytes', { size: number(bytes / 1024 / 1024, 1) });
}

/**
 * A countdown reading: "1:05:09" past an hour, else "05:09", or "5:09" with `padMinutes` false
 * (the phone's large figures). Digits stay Latin and the order left to right in every language
 * (show it in an element with dir="ltr"). Returns the words.
 */
export function clockText(seconds: number, padMinutes = true): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  const rest = pad(seconds % 60);
  if (hours > 0) return `${hours}:${pad(minutes)}:${rest}`;
  return `${padMinutes ? pad(minutes) : String(minutes)}:${rest}`;
}
