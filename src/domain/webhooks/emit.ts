import type { Db } from '../../db/database.ts';
import { presentAccommodations } from '../student-sessions/accommodations.ts';
import type { JobQueue } from '../ports/jobs.ts';
import {
  buildWebhookEvent,
  isoTime,
  newEventId,
  WEBHOOK_DELIVER_JOB,
  WEBHOOK_MAX_ATTEMPTS,
  type WebhookData,
  type WebhookDelivery,
  type WebhookEventType,
} from './webhook.ts';
import { findCallbackUrl, findExamInstitute, findFinishedSessionFacts } from './webhooks.repository.ts';

/** An event to send to an institute's `callback_url`. */
export interface NewWebhookEvent<T extends WebhookEventType> {
  readonly instituteId: number;
  readonly type: T;
  /** The event's `data` (see WebhookData in webhook.ts and docs/webhooks.md). */
  readonly data: WebhookData[T];
  /** When it happened (epoch ms; the state change's own `now`): the body's `created_at`. */
  readonly now: number;
}

/**
 * Queues an event for delivery to the institute's `callback_url`: one `webhook.deliver` job whose
 * payload holds the finished body, so every attempt sends the same bytes and the same event id.
 * Pass the transaction of the state change as `db`: the event then exists exactly when the change
 * commits (the outbox pattern), and survives any restart after. Nothing is queued when the
 * institute has no `callback_url` (or is gone). The job is written with the event's own time. Returns
 * the event id, or undefined when skipped.
 */
export async function emitWebhook<T extends WebhookEventType>(
  jobs: JobQueue,
  db: Db,
  event: NewWebhookEvent<T>,
): Promise<string | undefined> {
  const callbackUrl = await findCallbackUrl(db, event.instituteId);
  if (callbackUrl === undefined || callbackUrl === null) return undefined;
  const id = newEventId();
  const body = JSON.stringify(
    buildWebhookEvent({
      id,
      type: event.type,
      instituteId: event.instituteId,
      now: event.now,
      data: event.data,
    }),
  );
  const payload: WebhookDelivery = { eventId: id, type: event.type, instituteId: event.instituteId, body };
  // The job's own times are the event's: the time of the change.
  await jobs.enqueue(db, {
    kind: WEBHOOK_DELIVER_JOB,
    payload,
    maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    now: event.now,
  });
  return id;
}

/**
 * Queues `student_session.finished` for session `sessionId`, read as `db` sees it (call it in the
 * transaction that moved the session to `exam_finished`, after the move). Returns the event id, or
 * undefined when skipped (no callback_url, or the session is gone).
 */
export async function emitStudentSessionFinished(
  jobs: JobQueue,
  db: Db,
  sessionId: number,
  now: number,
): Promise<string | undefined> {
  const session = await findFinishedSessionFacts(db, sessionId);
  if (session === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId: session.instituteId,
    type: 'student_session.finished',
    now,
    data: {
      student_session_id: session.id,
      exam_id: session.examId,
      token: session.token,
      end_reason: session.endReason,
      ended_at: isoTime(session.endTime),
      accommodations: presentAccommodations(session.accommodations),
      breaks_taken: session.breaksTaken,
    },
  });
}

/**
 * Queues `exam_documents_zip.ready` for exam `examId` (call it in the transaction that records the
 * export's success). Returns the event id, or undefined when skipped (no callback_url, exam gone).
 */
export async function emitExamDocumentsZipReady(
  jobs: JobQueue,
  db: Db,
  examId: number,
  now: number,
): Promise<string | undefined> {
  const instituteId = await findExamInstitute(db, examId);
  if (instituteId === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId,
    type: 'exam_documents_zip.ready',
    now,
    data: {
      exam_id: examId,
      generated_at: isoTime(now),
      download_path: `/api/v3/exams/${examId}/download_exam_documents_zip`,
    },
  });
}

/** What a settled verdict tells the webhook (the reviews service's SessionReviewedEvent, in part). */
export interface ReviewedFacts {
  readonly studentSessionId: number;
  readonly examId: number;
  readonly instituteId: number;
  readonly verdict: string;
  readonly reviewerId: number | null;
  readonly reviewedAt: number;
}

/**
 * Queues `student_session.reviewed` for a settled verdict. Call it in the verdict's transaction.
 * Returns the event id, or undefined when skipped (no callback_url, or the session is gone).
 */
export async function emitStudentSessionReviewed(
  jobs: JobQueue,
  db: Db,
  facts: ReviewedFacts,
): Promise<string | undefined> {
  const session = await findFinishedSessionFacts(db, facts.studentSessionId);
  if (session === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId: facts.instituteId,
    type: 'student_session.reviewed',
    now: facts.reviewedAt,
    data: {
      student_session_id: facts.studentSessionId,
      exam_id: facts.examId,
      token: session.token,
      verdict: facts.verdict,
      reviewer_id: facts.reviewerId,
      reviewed_at: isoTime(facts.reviewedAt),
    },
  });
}

/**
 * Queues `recording.ready` for a stream of session `sessionId` just finalised. Call it in the
 * transaction that marks the recording `completed`. Returns the event id, or undefined when skipped.
 */
export async function emitRecordingReady(
  jobs: JobQueue,
  db: Db,
  recording: { readonly sessionId: number; readonly source: string; readonly durationSeconds: number },
  now: number,
): Promise<string | undefined> {
  const session = await findFinishedSessionFacts(db, recording.sessionId);
  if (session === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId: session.instituteId,
    type: 'recording.ready',
    now,
    data: {
      student_session_id: session.id,
      exam_id: session.examId,
      token: session.token,
      source: recording.source,
      duration_seconds: recording.durationSeconds,
    },
  });
}

/** What an appeal tells the webhooks (docs/appeals.md). Times are epoch milliseconds. */
export interface AppealFacts {
  readonly studentSessionId: number;
  readonly examId: number;
  readonly instituteId: number;
  /** The verdict appealed. */
  readonly appealedVerdict: string;
}

/**
 * Queues `student_session.appealed` for a new appeal. Call it in the appeal's transaction. Returns
 * the event id, or undefined when skipped (no callback_url, or the session is gone).
 */
export async function emitStudentSessionAppealed(
  jobs: JobQueue,
  db: Db,
  facts: AppealFacts & { readonly submittedAt: number; readonly filesCount: number },
): Promise<string | undefined> {
  const session = await findFinishedSessionFacts(db, facts.studentSessionId);
  if (session === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId: facts.instituteId,
    type: 'student_session.appealed',
    now: facts.submittedAt,
    data: {
      student_session_id: facts.studentSessionId,
      exam_id: facts.examId,
      token: session.token,
      verdict: facts.appealedVerdict,
      appeal_status: 'open',
      submitted_at: isoTime(facts.submittedAt),
      files_count: facts.filesCount,
    },
  });
}

/**
 * Queues `student_session.appeal_decided` for a decided appeal. Call it in the decision's
 * transaction. Returns the event id, or undefined when skipped.
 */
export async function emitStudentSessionAppealDecided(
  jobs: JobQueue,
  db: Db,
  facts: AppealFacts & {
    readonly status: string;
    readonly verdict: string;
    readonly decidedBy: number;
    readonly decidedAt: number;
  },
): Promise<string | undefined> {
  const session = await findFinishedSessionFacts(db, facts.studentSessionId);
  if (session === undefined) return undefined;
  return emitWebhook(jobs, db, {
    instituteId: facts.instituteId,
    type: 'student_session.appeal_decided',
    now: facts.decidedAt,
    data: {
      student_session_id: facts.studentSessionId,
      exam_id: facts.examId,
      token: session.token,
      appeal_status: facts.status,
      appealed_verdict: facts.appealedVerdict,
      verdict: facts.verdict,
      decided_by: facts.decidedBy,
      decided_at: isoTime(facts.decidedAt),
    },
  });
}
