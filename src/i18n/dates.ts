/**
 * Dates, times and sizes in a reader's language, through Intl. Every time a reader sees carries its
 * zone: the exam's time zone when the exam names one, else the reader's own (the browser's) or UTC
 * (the server's). Pure: the server and the browser pages import it alike.
 */
import { PSEUDO_LOCALE } from './locales.ts';

/** The Intl locale of a page locale (English's for the pseudo-locale). */
export function intlLocaleOf(locale: string): string {
  return locale === PSEUDO_LOCALE ? 'en' : locale;
}

/** A time zone Intl knows, else undefined (the caller's default: the browser's zone, or UTC). */
export function knownZone(timeZone: string | null | undefined): string | undefined {
  if (timeZone === null || timeZone === undefined || timeZone === '') return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}

type When = Date | number | string;

const toDate = (when: When): Date => (when instanceof Date ? when : new Date(when));

/**
 * A date and time with its zone, e.g. "30 November 2026, 09:00 CET" / "30 november 2026 om 09:00 CET".
 * `timeZone` is the exam's (IANA name); without one the runtime's own zone is used.
 */
export function formatDateTime(when: When, locale: string, timeZone?: string | null): string {
  return new Intl.DateTimeFormat(intlLocaleOf(locale), {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: knownZone(timeZone),
  })
    .format(toDate(when))
    .concat(' ', zoneLabel(when, locale, timeZone));
}

/** A time of day with its zone, e.g. "09:00 CET". */
export function formatClockTime(when: When, locale: string, timeZone?: string | null): string {
  const zone = knownZone(timeZone);
  return new Intl.DateTimeFormat(intlLocaleOf(locale), { hour: 'numeric', minute: '2-digit', timeZone: zone })
    .format(toDate(when))
    .concat(' ', zoneLabel(when, locale, timeZone));
}

/**
 * The zone's short name at that moment in the reader's language ("CET", "GMT+1"), with the IANA name
 * when the short name is only an offset (it has digits), so a reader abroad knows which place is meant.
 */
export function zoneLabel(when: When, locale: string, timeZone?: string | null): string {
  const zone = knownZone(timeZone);
  const short =
    new Intl.DateTimeFormat(intlLocaleOf(locale), { timeZoneName: 'short', timeZone: zone })
      .formatToParts(toDate(when))
      .find((part) => part.type === 'timeZoneName')?.value ?? '';
  const named = zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (/\d/.test(short) && named !== undefined && named !== 'UTC' && named !== 'Etc/UTC')
    return `${short} (${named})`;
  return short;
}

/** A size in bytes as a reader takes it in: "512 byte", "40 kB", "2,5 MB" (in the reader's language). */
export function formatSize(bytes: number, locale: string): string {
  const intl = intlLocaleOf(locale);
  const unit = (value: number, name: 'byte' | 'kilobyte' | 'megabyte', digits: number) =>
    new Intl.NumberFormat(intl, { style: 'unit', unit: name, maximumFractionDigits: digits }).format(value);
  if (bytes < 1024) return unit(bytes, 'byte', 0);
  if (bytes < 1024 * 1024) return unit(bytes / 1024, 'kilobyte', 0);
  return unit(bytes / 1024 / 1024, 'megabyte', 1);
}
