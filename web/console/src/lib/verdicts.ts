/**
 * Review verdicts in words (docs/review.md), in the order a reviewer meets them, and the second
 * review's states, for the review queue and the review screen.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { wordsRecord } from './words';

export const VERDICT_WORDS = wordsRecord({
  not_reviewed: 'console.verdicts.notReviewed',
  in_review: 'console.verdicts.inReview',
  passed: 'console.verdicts.passed',
  suspicious: 'console.verdicts.suspicious',
  violation: 'console.verdicts.violation',
});

export type Verdict = keyof typeof VERDICT_WORDS;

/** Every verdict, in order. */
export const VERDICTS = Object.keys(VERDICT_WORDS) as Verdict[];

/** What each verdict means, as the form's help says it. */
export const VERDICT_HELP: Readonly<Record<Verdict, string>> = wordsRecord({
  not_reviewed: 'console.verdicts.helpNotReviewed',
  in_review: 'console.verdicts.helpInReview',
  passed: 'console.verdicts.helpPassed',
  suspicious: 'console.verdicts.helpSuspicious',
  violation: 'console.verdicts.helpViolation',
});

/** The words for a verdict (the raw value, underscores as spaces, for one this console does not know). */
export function verdictWords(verdict: string): string {
  return (VERDICT_WORDS as Record<string, string>)[verdict] ?? verdict.replaceAll('_', ' ');
}

/** The second review's state in words. */
export function secondReviewWords(state: string): string {
  if (state === 'pending') return t('console.verdicts.secondPending');
  if (state === 'confirmed') return t('console.verdicts.secondConfirmed');
  return t('console.verdicts.secondNotNeeded');
}
