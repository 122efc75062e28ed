/**
 * Review verdicts in words (docs/review.md), in the order a reviewer meets them, and the second
 * review's states, for the review queue and the review screen.
 */

export const VERDICT_WORDS = {
  not_reviewed: 'Not reviewed',
  in_review: 'In review',
  passed: 'Passed',
  suspicious: 'Suspicious',
  violation: 'Violation',
} as const;

export type Verdict = keyof typeof VERDICT_WORDS;

/** Every verdict, in order. */
export const VERDICTS = Object.keys(VERDICT_WORDS) as Verdict[];

/** What each verdict means, as the form's help says it. */
export const VERDICT_HELP: Readonly<Record<Verdict, string>> = {
  not_reviewed: 'Nobody has judged this session yet.',
  in_review: 'You are working on it.',
  passed: 'Nothing wrong.',
  suspicious: 'Worth a second look, but not a violation.',
  violation: 'The exam rules were broken.',
};

/** The words for a verdict (the raw value, underscores as spaces, for one this console does not know). */
export function verdictWords(verdict: string): string {
  return (VERDICT_WORDS as Record<string, string>)[verdict] ?? verdict.replaceAll('_', ' ');
}

/** The second review's state in words. */
export function secondReviewWords(state: string): string {
  if (state === 'pending') return 'Waiting for a second reviewer';
  if (state === 'confirmed') return 'Confirmed by a second reviewer';
  return 'Not needed';
}
