/**
 * A student session's status in words, in the order a session passes through them
 * (src/domain/student-sessions/status.ts), for the students table and the live monitor.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { wordsPair, wordsRecord } from './words';

export const STATUS_WORDS = wordsRecord({
  registered: 'console.studentStatus.registered',
  email_sent: 'console.studentStatus.emailSent',
  after_check_req: 'console.studentStatus.checksDone',
  in_setup: 'console.studentStatus.inSetup',
  exam_not_started: 'console.studentStatus.readyToStart',
  exam_started: 'console.studentStatus.examStarted',
  exam_finished: 'console.studentStatus.finished',
});

export type StudentStatus = keyof typeof STATUS_WORDS;

/** Every status, in order. */
export const STATUSES = Object.keys(STATUS_WORDS) as StudentStatus[];

/** The words for `status` (the raw value, underscores as spaces, for one this console does not know). */
export function statusWords(status: string): string {
  return (STATUS_WORDS as Record<string, string>)[status] ?? status.replaceAll('_', ' ');
}

/** The room's requirement checks in the order it runs them, with their short names. */
export type CheckName =
  | 'webcam_check'
  | 'microphone_check'
  | 'screenshare_check'
  | 'speakers_check'
  | 'bandwidth_check'
  | 'mobile_check';

export const CHECKS: readonly (readonly [CheckName, string])[] = [
  wordsPair('webcam_check', 'console.studentStatus.checkCamera'),
  wordsPair('microphone_check', 'console.studentStatus.checkMicrophone'),
  wordsPair('screenshare_check', 'console.studentStatus.checkScreen'),
  wordsPair('speakers_check', 'console.studentStatus.checkSpeakers'),
  wordsPair('bandwidth_check', 'console.studentStatus.checkConnection'),
  wordsPair('mobile_check', 'console.studentStatus.checkPhone'),
];
export type CheckValue = 'not_started' | 'not_completed' | 'succeeded' | 'failed' | 'skipped';

/** A check's result in words and the symbol shown beside it. */
export const RESULTS: Record<CheckValue, { readonly words: string; readonly symbol: string }> = {
  succeeded: result('console.studentStatus.resultPassed', '✓'),
  failed: result('console.studentStatus.resultFailed', '✗'),
  not_completed: result('console.studentStatus.resultNotFinished', '…'),
  skipped: result('console.studentStatus.resultSkipped', '↷'),
  not_started: result('console.studentStatus.resultNotStarted', '–'),
};

function result(key: string, symbol: string): { readonly words: string; readonly symbol: string } {
  return {
    get words() {
      return t(key);
    },
    symbol,
  };
}
