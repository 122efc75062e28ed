import {
  latestEntry,
  type QueueEntry,
  type ReviewEntry,
  reviewedValue,
  secondReviewOf,
  type SessionReview,
} from '../../domain/reviews/review.ts';
import { isoTime } from '../time.ts';

/** A reviewer as V3 shows one: id and name (null when the entry names nobody). */
function presentReviewer(id: number | null, name: string | null): Record<string, unknown> | null {
  return id === null ? null : { id, name };
}

/** One entry of a review's history. */
export function presentReviewEntryV3(entry: ReviewEntry): Record<string, unknown> {
  return {
    id: entry.id,
    verdict: entry.verdict,
    comment: entry.comment,
    reviewer: presentReviewer(entry.reviewerId, entry.reviewerName),
    reviewed_at: isoTime(entry.createdAt),
    second_review: entry.secondReview,
  };
}

/**
 * The V3 review record (docs/review.md, "API"): the newest verdict with its reviewer, time and
 * comment, whether it is confirmed, the second-review state, and the whole history, oldest first.
 */
export function presentReviewV3(review: SessionReview): Record<string, unknown> {
  const latest = latestEntry(review);
  const { pending, confirmation } = secondReviewOf(review);
  const state = latest?.secondReview ?? 'not_required';
  return {
    student_session_id: review.studentSessionId,
    verdict: latest?.verdict ?? review.initialReviewed,
    comment: latest?.comment ?? null,
    reviewer: latest === undefined ? null : presentReviewer(latest.reviewerId, latest.reviewerName),
    reviewed_at: latest === undefined ? null : isoTime(latest.createdAt),
    confirmed: state !== 'pending',
    reviewed: latest === undefined ? review.initialReviewed : reviewedValue(latest),
    second_review: {
      required: review.secondReviewRequired,
      status: state,
      first_reviewer:
        pending === undefined ? null : presentReviewer(pending.reviewerId, pending.reviewerName),
      confirmed_by:
        confirmation === undefined
          ? null
          : presentReviewer(confirmation.reviewerId, confirmation.reviewerName),
      confirmed_at: confirmation === undefined ? null : isoTime(confirmation.createdAt),
    },
    history: review.history.map(presentReviewEntryV3),
  };
}

/** One line of an exam's review queue. */
export function presentQueueEntryV3(entry: QueueEntry): Record<string, unknown> {
  return {
    id: entry.studentSessionId,
    name: entry.name,
    email: entry.email,
    attempt: entry.attempt,
    start_time: isoTime(entry.startTime),
    end_time: isoTime(entry.endTime),
    incidents_count: entry.incidentsCount,
    suspicion_score: entry.suspicionScore,
    verdict: entry.verdict,
    confirmed: entry.secondReview !== 'pending',
    second_review: entry.secondReview,
    reviewed: entry.reviewed,
    comment: entry.comment,
    reviewer: presentReviewer(entry.reviewerId, entry.reviewerName),
    reviewed_at: isoTime(entry.reviewedAt),
    appeal_status: entry.appealStatus,
  };
}
