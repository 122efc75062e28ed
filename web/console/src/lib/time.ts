/**
 * Times as the viewer reads them: in the browser's own time zone, with the zone named, so a proctor
 * in another country never guesses. The service stores and sends UTC.
 */
import { formatLocale } from './format-locale.ts';

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** One formatter per language shown so far (building one is not free; lists format many times). */
const formatters = new Map<string, Intl.DateTimeFormat>();

// dateStyle and timeStyle cannot be combined with timeZoneName, so the parts are named one by one.
function withZone(): Intl.DateTimeFormat {
  const locale = formatLocale();
  let formatter = formatters.get(locale);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    formatters.set(locale, formatter);
  }
  return formatter;
}

/** "23 Nov 2026, 14:05 CET" for an ISO time, in the console's language (see formatLocale); an em dash for none. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : withZone().format(date);
}

/** The viewer's IANA zone name, for labels ("times in Europe/Amsterdam"). */
export function viewerZone(): string {
  return zone;
}

/** The value of an `<input type="datetime-local">` for an ISO time, in the viewer's zone. */
export function toLocalInput(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** An ISO time (UTC) for the value of a `datetime-local` input read in the viewer's zone. */
export function fromLocalInput(value: string): string | null {
  if (value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
