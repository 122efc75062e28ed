import type { Actor } from '../access.ts';
import { Invalid, ParamMissing } from '../errors.ts';
import { optionalString, param, type Params } from '../input.ts';
import type { ReviewEntry } from '../reviews/review.ts';

/**
 * Appeals (docs/appeals.md): a candidate contests a final `suspicious` or `violation` verdict with a
 * statement and files, within the institute's `appeal_period_days`; a reviewer other than the one
 * who gave the verdict decides it. An overturned appeal records a new verdict (`passed`); the
 * review history keeps the appealed one. Pure rules: no database, no clock.
 */

export const APPEAL_STATUSES = ['open', 'upheld', 'overturned'] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];

/** What a second reviewer decides. */
export const APPEAL_DECISIONS = ['upheld', 'overturned'] as const;
export type AppealDecision = (typeof APPEAL_DECISIONS)[number];

/** The verdicts a candidate may contest. */
export const APPEALABLE_VERDICTS: readonly string[] = ['suspicious', 'violation'];

/** The verdict an overturned appeal leaves the session with (the review vocabulary's "no fault"). */
export const OVERTURNED_VERDICT = 'passed';

/** The longest statement kept (a few pages); a longer one is refused, never cut. */
export const STATEMENT_MAX = 10_000;
/** The longest decision comment kept, as a verdict's comment. */
export const DECISION_COMMENT_MAX = 10_000;
/** Files one appeal may carry (the server reads at most five file parts per request). */
export const APPEAL_FILES_MAX = 5;

const DAY_MS = 86_400_000;

/** A file sent with an appeal. */
export interface AppealFile {
  readonly fileId: number;
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
}

/** One appeal. Times are epoch milliseconds. */
export interface Appeal {
  readonly id: number;
  readonly studentSessionId: number;
  /** The verdict entry appealed. */
  readonly reviewId: number;
  readonly statement: string;
  readonly status: AppealStatus;
  readonly submittedAt: number;
  readonly decidedBy: number | null;
  readonly decidedByName: string | null;
  readonly decidedAt: number | null;
  readonly comment: string | null;
  /** The verdict entry an overturned appeal recorded. */
  readonly decisionReviewId: number | null;
  readonly files: readonly AppealFile[];
}

/** An appeal with the verdict it contests, as staff read it. */
export interface AppealWithVerdict {
  readonly appeal: Appeal;
  /** The appealed entry (undefined only if the history lost it, which nothing does today). */
  readonly appealed: ReviewEntry | undefined;
  /** A download address per file, in the files' order (null when the storage has lost one). */
  readonly fileLinks: readonly ({ readonly url: string; readonly expiresAt: number } | null)[];
}

/** The index of the first entry of the trailing run restating the newest settled verdict. */
function firstOfRun(history: readonly ReviewEntry[]): number {
  const latest = history.at(-1);
  let index = history.length - 1;
  while (index > 0 && latest !== undefined) {
    const before = history[index - 1];
    if (before === undefined || before.verdict !== latest.verdict || before.secondReview === 'pending') break;
    index -= 1;
  }
  return index;
}

/**
 * The verdict a candidate may contest, from the session's history (oldest first): the newest entry
 * when it is a settled `suspicious` or `violation` (not a violation still waiting for its second
 * reviewer), with the time it became final: the first of the run of entries restating it, so a
 * comment added later does not lengthen the period. Returns undefined when nothing is contestable.
 */
export function finalVerdictOf(
  history: readonly ReviewEntry[],
): { readonly entry: ReviewEntry; readonly finalAt: number } | undefined {
  const latest = history.at(-1);
  if (latest === undefined || !APPEALABLE_VERDICTS.includes(latest.verdict)) return undefined;
  if (latest.secondReview === 'pending') return undefined;
  return { entry: latest, finalAt: history[firstOfRun(history)]?.createdAt ?? latest.createdAt };
}

/** The last instant an appeal is accepted: `finalAt` plus the period (days of 24 hours). */
export function appealDeadline(finalAt: number, periodDays: number): number {
  return finalAt + periodDays * DAY_MS;
}

/**
 * True when the newest entry made a contestable verdict final just now (not a restatement of one
 * already final): the moment the candidate is told by email.
 */
export function isNewFinalVerdict(history: readonly ReviewEntry[]): boolean {
  return finalVerdictOf(history) !== undefined && firstOfRun(history) === history.length - 1;
}

/**
 * Reads an appeal's statement: required, trimmed, at most STATEMENT_MAX characters. Returns it;
 * throws ParamMissing or Invalid naming `statement`.
 */
export function readStatement(params: Params): string {
  const value = param(params, 'statement');
  if (value !== undefined && value !== null && typeof value !== 'string') {
    throw new Invalid('statement', 'must be text');
  }
  const text = (value ?? '').trim();
  if (text === '') throw new ParamMissing('statement');
  if (text.length > STATEMENT_MAX) {
    throw new Invalid('statement', `is too long (maximum is ${STATEMENT_MAX} characters)`);
  }
  return text;
}

/** A decision to record: `decision` and an optional comment. */
export interface DecisionInput {
  readonly decision: AppealDecision;
  readonly comment: string | null;
}

/**
 * Reads `PUT .../appeal`: `decision` (required, upheld or overturned) and `comment` (optional, blank
 * reads as none, at most DECISION_COMMENT_MAX). Returns them; throws ParamMissing or Invalid.
 */
export function readDecisionInput(params: Params): DecisionInput {
  const value = param(params, 'decision');
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new ParamMissing('decision');
  }
  const decision = APPEAL_DECISIONS.find((each) => each === value);
  if (decision === undefined) throw new Invalid('decision', 'is not included in the list');
  const comment = optionalString(params, 'comment');
  const text = comment === undefined || comment === null ? '' : comment.trim();
  if (text.length > DECISION_COMMENT_MAX) {
    throw new Invalid('comment', `is too long (maximum is ${DECISION_COMMENT_MAX} characters)`);
  }
  return { decision, comment: text === '' ? null : text };
}

/** True when `actor` gave the appealed verdict, and so may not decide the appeal. */
export function gaveTheVerdict(actor: Actor, appealed: ReviewEntry | undefined): boolean {
  return appealed !== undefined && appealed.reviewerId === actor.id;
}
