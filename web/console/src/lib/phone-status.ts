/**
 * The phone of a `mobile_cam` exam (the second camera, docs/room.md "The phone") as the review
 * screen describes it: its status in words, and what the session's record says of it.
 */
import { wordsRecord } from './words';

/** Each status of the phone (src/domain/mobile/mobile.ts) in words a reviewer reads. */
export const PHONE_STATUS_WORDS: Readonly<Record<string, string>> = wordsRecord({
  not_paired: 'console.phoneStatus.notPaired',
  paired: 'console.phoneStatus.paired',
  streaming: 'console.phoneStatus.streaming',
  lost: 'console.phoneStatus.lost',
});

/** What a session's record tells of its phone; a field the service does not send stays undefined. */
export interface PhoneFacts {
  readonly status: string | undefined;
  readonly device: string | undefined;
}

/**
 * Reads `mobile_status` and `mobile_device` from a V3 session record when they are there (older
 * services send neither). Returns them, undefined when absent or empty.
 */
export function phoneFacts(record: object): PhoneFacts {
  const fields = record as Record<string, unknown>;
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined;
  return { status: text(fields.mobile_status), device: text(fields.mobile_device) };
}

/** The words for a phone status (the raw value, underscores as spaces, for one this console does not know). */
export function phoneStatusWords(status: string): string {
  return PHONE_STATUS_WORDS[status] ?? status.replaceAll('_', ' ');
}
