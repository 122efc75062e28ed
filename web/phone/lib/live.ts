/**
 * The phone's side of live proctoring (web/live/phone-live.ts), loaded only in a live-proctored
 * exam: the other exams never fetch the live client.
 */
import type * as PhoneLiveModule from '../../live/phone-live.ts';

export type { PhoneLive, PhoneLiveState } from '../../live/phone-live.ts';

/** Loads the live module. Returns it; rejects when it cannot be loaded. */
export function loadPhoneLive(): Promise<typeof PhoneLiveModule> {
  return import('../../live/phone-live.ts');
}
