/**
 * Text a candidate page keeps for later (an error in the alert, a status line, a button's label set
 * by an action) as a catalogue key and its values rather than as words: shown through `say()`, it
 * follows the language menu like every other message on the page.
 */
import { textDirection } from '../../src/i18n/locales.ts';
import { ApiError } from './http.ts';
import { currentLocale, t, type MessageValues } from './i18n.svelte.ts';

/** A catalogue message waiting to be shown: its key and its placeholders' values. */
export interface Phrase {
  readonly key: string;
  readonly values?: MessageValues;
  /** Words from elsewhere (the server's own sentence) shown after the message as a detail. */
  readonly detail?: string;
}

/** A Phrase of `key` with `values`. */
export function phrase(key: string, values?: MessageValues): Phrase {
  return values === undefined ? { key } : { key, values };
}

/** The words of `text` in the page's language now (a plain string is shown as it is). Reactive. */
export function say(text: Phrase | string): string {
  if (typeof text === 'string') return text;
  const message = t(text.key, text.values);
  if (text.detail === undefined) return message;
  return t('candidate.error.withDetail', { message, detail: isolate(text.detail) });
}

/**
 * Data put into a sentence (a name, a file name, a browser's reason) as a right-to-left page needs
 * it: between Unicode isolates, so its own direction cannot reorder the words around it ("Ada
 * Lovelace" in an Arabic sentence). A left-to-right page gets the text as it is. Reactive.
 */
export function isolate(text: string): string {
  return textDirection(currentLocale()) === 'rtl' ? `\u2068${text}\u2069` : text;
}

/** An error whose message is a catalogue Phrase: thrown by an action, shown in the page's alert. */
export class PhraseError extends Error {
  readonly phrase: Phrase;

  constructor(said: Phrase, options?: ErrorOptions) {
    super(said.key, options);
    this.phrase = said;
  }
}

/** Server sentences that say no more than the catalogue's message for their status. */
const GENERIC_SENTENCES: ReadonlySet<string> = new Set([
  'You are not authorized to access this page.',
  'Not Found',
  'Service unavailable',
  'Bad Request',
  'Malformed JSON body',
  'Payload Too Large',
  'Unsupported Media Type',
]);

/** The catalogue's message for a refusal, by HTTP status. */
function refusalKey(status: number): string {
  switch (status) {
    case 0:
      return 'candidate.error.unreachable';
    case 400:
      return 'candidate.error.badRequest';
    case 401:
    case 403:
      return 'candidate.error.notAllowed';
    case 404:
      return 'candidate.error.notFound';
    case 409:
      return 'candidate.error.conflict';
    case 413:
      return 'candidate.error.tooLarge';
    case 415:
      return 'candidate.error.unsupportedType';
    case 422:
      return 'candidate.error.invalid';
    case 429:
      return 'candidate.error.rateLimited';
    case 503:
      return 'candidate.error.unavailable';
    default:
      return 'candidate.error.server';
  }
}

/**
 * What to show for a failed action: a PhraseError's own phrase; for an ApiError, its phrase when it
 * carries one, else the catalogue's message for its status with the server's (English) sentence as
 * a detail when that says more; for anything else, a general message with the error as the detail.
 */
export function errorPhrase(error: unknown): Phrase {
  if (error instanceof PhraseError) return error.phrase;
  if (error instanceof ApiError) {
    if (error.phrase !== undefined) return error.phrase;
    const key = refusalKey(error.status);
    const detail = error.message.trim();
    const values = { status: error.status };
    if (detail === '' || GENERIC_SENTENCES.has(detail) || error.status === 0) return phrase(key, values);
    return { key, values, detail };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { key: 'candidate.error.unexpected', detail };
}
