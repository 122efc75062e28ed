import { type Actor, baseRole, canManageExam, type ExamScope } from '../access.ts';
import { Forbidden, Invalid, ParamMissing } from '../errors.ts';
import { has, optionalString, param, type Params } from '../input.ts';
import type { ListFields } from '../listing.ts';
import { readSessionChanges } from '../student-sessions/student-session.ts';

/**
 * Review verdicts on a student session (docs/review.md). Every verdict recorded is a new entry,
 * never an edit, so a session's entries are its review history and the newest is its verdict.
 */

/** The verdicts, in the order a review usually goes through them. */
export const VERDICTS = ['not_reviewed', 'in_review', 'passed', 'suspicious', 'violation'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * Where a verdict stands towards the second-review rule: `not_required` (it is final as recorded),
 * `pending` (a `violation` waiting for a second, different reviewer), `confirmed` (a `violation` a
 * second reviewer confirmed, or restated after that).
 */
export const SECOND_REVIEW_STATES = ['not_required', 'pending', 'confirmed'] as const;
export type SecondReviewState = (typeof SECOND_REVIEW_STATES)[number];

/** One recorded verdict. Times are epoch milliseconds. */
export interface ReviewEntry {
  readonly id: number;
  readonly studentSessionId: number;
  readonly verdict: Verdict;
  readonly comment: string | null;
  /** Null only for an entry whose reviewer is unknown (none is written so today). */
  readonly reviewerId: number | null;
  /** The reviewer's name when the verdict was recorded (the history outlives a deleted account). */
  readonly reviewerName: string | null;
  readonly secondReview: SecondReviewState;
  readonly createdAt: number;
}

/** A session's review: its history, oldest first, and the institute's second-review setting. */
export interface SessionReview {
  readonly studentSessionId: number;
  /** What the session record's `reviewed` shows when there is no entry yet. */
  readonly initialReviewed: string;
  readonly history: readonly ReviewEntry[];
  /** The institute's `second_review_required` setting as it is now. */
  readonly secondReviewRequired: boolean;
}

/** A verdict a reviewer asks to record. */
export interface VerdictInput {
  readonly verdict: Verdict;
  readonly comment: string | null;
}

/** The longest comment kept (a committee reads it; a page of text is plenty). */
export const COMMENT_MAX = 10_000;

/**
 * Who may record a verdict on a session of this exam: whoever manages the exam (its owner and
 * co-managers, administrators, superusers) and the institute's reviewers. Proctors and auditors
 * read reviews but do not judge (contract §4: no writes otherwise).
 */
export function canReviewSession(actor: Actor, exam: ExamScope): boolean {
  if (canManageExam(actor, exam)) return true;
  return exam.instituteId === actor.instituteId && baseRole(actor.role) === 'reviewer';
}

function readVerdictParam(params: Params, name: string): Verdict {
  const value = param(params, name);
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new ParamMissing(name);
  }
  const found = VERDICTS.find((verdict) => verdict === value);
  if (found === undefined) throw new Invalid(name, 'is not included in the list');
  return found;
}

function readComment(params: Params): string | null {
  const comment = optionalString(params, 'comment');
  if (comment === undefined || comment === null) return null;
  const text = comment.trim();
  if (text.length > COMMENT_MAX) {
    throw new Invalid('comment', `is too long (maximum is ${COMMENT_MAX} characters)`);
  }
  return text === '' ? null : text;
}

/**
 * Reads `PUT /review`'s parameters: `verdict` (required, one of VERDICTS) and `comment` (optional;
 * blank reads as none). Returns them; throws ParamMissing or Invalid naming the field.
 */
export function readVerdictInput(params: Params): VerdictInput {
  return { verdict: readVerdictParam(params, 'verdict'), comment: readComment(params) };
}

/**
 * Reads a session update's `reviewed` (with an optional `comment`), the compat way to record a
 * verdict. Returns undefined when `reviewed` was not sent; throws ParamMissing or Invalid naming
 * `reviewed` (or `comment`).
 */
export function readReviewedChange(params: Params): VerdictInput | undefined {
  if (!has(params, 'reviewed')) return undefined;
  return { verdict: readVerdictParam(params, 'reviewed'), comment: readComment(params) };
}

/**
 * True when a session update carries a change besides `reviewed` (a field readSessionChanges reads,
 * or `lti_resource_id`). Throws Invalid for a bad one, before anything is written.
 */
export function sendsSessionChanges(params: Params): boolean {
  return Object.keys(readSessionChanges(params, 'update')).length > 0 || has(params, 'lti_resource_id');
}

/** The newest entry, or undefined before the first verdict. */
export function latestEntry(review: Pick<SessionReview, 'history'>): ReviewEntry | undefined {
  return review.history.at(-1);
}

/**
 * Where a new verdict stands towards the second-review rule, given the newest entry before it and
 * the institute's setting:
 * - anything but `violation` is final (`not_required`); lowering a verdict needs no second opinion;
 * - `violation` over a pending violation confirms it, unless the actor recorded that violation
 *   (Forbidden: nobody confirms their own);
 * - `violation` over a final violation stays final (a comment added to a settled violation);
 * - any other `violation` is `pending` when the institute requires a second review, else final.
 * Returns the state; throws Forbidden for a self-confirmation.
 */
export function secondReviewFor(
  input: VerdictInput,
  actor: Actor,
  previous: ReviewEntry | undefined,
  secondReviewRequired: boolean,
): SecondReviewState {
  if (input.verdict !== 'violation') return 'not_required';
  if (previous?.verdict === 'violation') {
    if (previous.secondReview !== 'pending') return previous.secondReview;
    if (previous.reviewerId === actor.id)
      throw new Forbidden('a reviewer may not confirm their own violation');
    return 'confirmed';
  }
  return secondReviewRequired ? 'pending' : 'not_required';
}

/**
 * True when recording `input` would repeat the newest entry exactly (same reviewer, verdict, comment
 * and standing): a retried request, which adds nothing to the history.
 */
export function repeatsLatest(
  input: VerdictInput,
  actor: Actor,
  previous: ReviewEntry | undefined,
  secondReview: SecondReviewState,
): boolean {
  return (
    previous !== undefined &&
    previous.reviewerId === actor.id &&
    previous.verdict === input.verdict &&
    previous.comment === input.comment &&
    previous.secondReview === secondReview
  );
}

/**
 * What the session record's `reviewed` shows for an entry: its verdict, except that a violation
 * still waiting for its second reviewer shows `in_review`, so a client reading only the session
 * never acts on an unconfirmed violation.
 */
export function reviewedValue(entry: Pick<ReviewEntry, 'verdict' | 'secondReview'>): Verdict {
  return entry.secondReview === 'pending' ? 'in_review' : entry.verdict;
}

/**
 * The second-review facts of a review: for a confirmed violation, the entry that confirmed it and
 * the pending one before it. Returns undefined entries when there are none.
 */
export function secondReviewOf(review: Pick<SessionReview, 'history'>): {
  readonly pending: ReviewEntry | undefined;
  readonly confirmation: ReviewEntry | undefined;
} {
  const { history } = review;
  const latest = history.at(-1);
  if (latest === undefined || latest.verdict !== 'violation') {
    return { pending: undefined, confirmation: undefined };
  }
  if (latest.secondReview === 'pending') return { pending: latest, confirmation: undefined };
  if (latest.secondReview !== 'confirmed') return { pending: undefined, confirmation: undefined };
  // Walk back over the restatements of the confirmed violation to the entry that confirmed it.
  let index = history.length - 1;
  while (index > 0 && history[index - 1]?.secondReview === 'confirmed') index -= 1;
  const before = history[index - 1];
  return {
    pending: before?.secondReview === 'pending' ? before : undefined,
    confirmation: history[index],
  };
}

/**
 * What a `student_session.reviewed` webhook carries (docs/review.md, "API"): sent when a session
 * gets a settled verdict (`passed`, `suspicious`, or a `violation` that needs no more confirmation).
 */
export interface SessionReviewedEvent {
  readonly studentSessionId: number;
  readonly examId: number;
  readonly instituteId: number;
  readonly verdict: Verdict;
  readonly comment: string | null;
  readonly reviewerId: number | null;
  readonly reviewedAt: number;
  readonly reviewEntryId: number;
}

/**
 * The `student_session.reviewed` event a new entry causes, or undefined when the entry settles
 * nothing (`not_reviewed`, `in_review`, a violation still pending).
 */
export function reviewedEventFor(
  entry: ReviewEntry,
  exam: { readonly id: number; readonly instituteId: number },
): SessionReviewedEvent | undefined {
  if (entry.verdict === 'not_reviewed' || entry.verdict === 'in_review') return undefined;
  if (entry.secondReview === 'pending') return undefined;
  return {
    studentSessionId: entry.studentSessionId,
    examId: exam.id,
    instituteId: exam.instituteId,
    verdict: entry.verdict,
    comment: entry.comment,
    reviewerId: entry.reviewerId,
    reviewedAt: entry.createdAt,
    reviewEntryId: entry.id,
  };
}

// ---- The review queue ----

/** One finished session of an exam as the review queue lists it. */
export interface QueueEntry {
  readonly studentSessionId: number;
  readonly name: string;
  readonly email: string;
  readonly attempt: number;
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly incidentsCount: number;
  /** From the undismissed automated flags, 0 to 100 (src/domain/flags/score.ts). */
  readonly suspicionScore: number;
  /** The newest verdict recorded (`not_reviewed` before any). */
  readonly verdict: string;
  readonly secondReview: SecondReviewState;
  /** What the session record's `reviewed` shows. */
  readonly reviewed: string;
  readonly comment: string | null;
  readonly reviewerId: number | null;
  readonly reviewerName: string | null;
  readonly reviewedAt: number | null;
  /** The candidate's appeal: `none`, `open`, `upheld` or `overturned` (docs/appeals.md). */
  readonly appealStatus: string;
}

/** What the review queue filters and sorts on (columns of the queue's own select). */
export const REVIEW_QUEUE_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  email: { column: 'email', type: 'string', notNull: true },
  attempt: { column: 'attempt', type: 'integer', notNull: true },
  start_time: { column: 'start_time', type: 'time' },
  end_time: { column: 'end_time', type: 'time' },
  incidents_count: { column: 'incidents_count', type: 'integer', notNull: true },
  suspicion_score: { column: 'suspicion_score', type: 'integer', notNull: true },
  verdict: { column: 'verdict', type: 'string', notNull: true },
  second_review: { column: 'second_review', type: 'string', notNull: true },
  reviewed: { column: 'reviewed', type: 'string', notNull: true },
  reviewer_id: { column: 'reviewer_id', type: 'integer' },
  reviewed_at: { column: 'reviewed_at', type: 'time' },
  appeal_status: { column: 'appeal_status', type: 'string', notNull: true },
  /** 1 while the candidate's appeal is open, else 0: `sort=[{"appeal_open":"desc"}]` puts them first. */
  appeal_open: { column: 'appeal_open', type: 'integer', notNull: true },
};

/**
 * The queue's `verdict` shortcut: one verdict or several separated by commas. Returns them, or
 * undefined when not sent; throws Invalid naming `verdict` for a name not in VERDICTS.
 */
export function readQueueVerdicts(params: Params): readonly Verdict[] | undefined {
  const value = param(params, 'verdict');
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Invalid('verdict', 'is not included in the list');
  return value.split(',').map((name) => {
    const found = VERDICTS.find((verdict) => verdict === name.trim());
    if (found === undefined) throw new Invalid('verdict', 'is not included in the list');
    return found;
  });
}
