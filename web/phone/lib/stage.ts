/**
 * What the page shows, read from the server's view of the session: the stage, the check's line
 * and the seconds left. Pure: the session module applies them.
 */
import type { PhoneView } from './api.ts';
import type { Phrase } from '../../shared/phrase.ts';

export type Stage = 'loading' | 'setup' | 'exam' | 'finished' | 'gone';

/** The check's result line: its words and whether it passed or failed. */
export interface CheckLine {
  readonly text: Phrase | undefined;
  readonly outcome: '' | 'succeeded' | 'failed';
}

/** The stage the session's status calls for; a chunk refused as "finished" ends it too. */
export function stageOf(view: PhoneView, refusedAsFinished: boolean): Stage {
  const status = view.session.status;
  if (status === 'exam_finished' || refusedAsFinished) return 'finished';
  return status === 'exam_started' ? 'exam' : 'setup';
}

/** The check's line, as the server's view says (a failure shown by the check itself stays until then). */
export function checkLineOf(view: PhoneView | undefined, shown: CheckLine): CheckLine {
  const check = view?.mobile.check;
  if (check === 'succeeded') return { text: { key: 'phone.setup.passed' }, outcome: 'succeeded' };
  if (check === 'failed') return { text: { key: 'phone.setup.failedTryAgain' }, outcome: '' };
  return { text: shown.text, outcome: '' };
}

/**
 * Seconds left by the server's figure, run on for `elapsedMs` since the view arrived (rounded as the
 * exam room's countdown, so both show the same figure); standing still during the candidate's rest
 * break, when the exam clock stops. Null when untimed.
 */
export function secondsLeftOf(view: PhoneView | undefined, elapsedMs: number): number | null {
  const left = view?.session.time_left_seconds;
  if (left === null || left === undefined) return null;
  if (onBreak(view)) return left;
  return Math.max(0, Math.round(left - elapsedMs / 1000));
}

/** True while the candidate is on a rest break (the exam clock stands still). */
export function onBreak(view: PhoneView | undefined): boolean {
  return view?.session.status === 'exam_started' && view.session.break !== null;
}

/** True while the phone's recording pauses: a rest break of an exam that does not record during breaks. */
export function recordingPausedFor(view: PhoneView | undefined): boolean {
  return onBreak(view) && view?.exam.record_during_breaks === false;
}
