/**
 * A student session's status in words, in the order a session passes through them
 * (src/domain/student-sessions/status.ts), for the students table and the live monitor.
 */

export const STATUS_WORDS = {
  registered: 'Registered',
  email_sent: 'Email sent',
  after_check_req: 'Checks done',
  in_setup: 'In setup',
  exam_not_started: 'Ready to start',
  exam_started: 'Exam started',
  exam_finished: 'Finished',
} as const;

export type StudentStatus = keyof typeof STATUS_WORDS;

/** Every status, in order. */
export const STATUSES = Object.keys(STATUS_WORDS) as StudentStatus[];

/** The words for `status` (the raw value, underscores as spaces, for one this console does not know). */
export function statusWords(status: string): string {
  return (STATUS_WORDS as Record<string, string>)[status] ?? status.replaceAll('_', ' ');
}

/** The room's requirement checks in the order it runs them, with their short names. */
export const CHECKS = [
  ['webcam_check', 'Camera'],
  ['microphone_check', 'Microphone'],
  ['screenshare_check', 'Screen'],
  ['speakers_check', 'Speakers'],
  ['bandwidth_check', 'Connection'],
  ['mobile_check', 'Phone'],
] as const;

export type CheckName = (typeof CHECKS)[number][0];
export type CheckValue = 'not_started' | 'not_completed' | 'succeeded' | 'failed' | 'skipped';

/** A check's result in words and the symbol shown beside it. */
export const RESULTS: Record<CheckValue, { readonly words: string; readonly symbol: string }> = {
  succeeded: { words: 'passed', symbol: '✓' },
  failed: { words: 'failed', symbol: '✗' },
  not_completed: { words: 'not finished', symbol: '…' },
  skipped: { words: 'skipped', symbol: '↷' },
  not_started: { words: 'not started', symbol: '–' },
};
