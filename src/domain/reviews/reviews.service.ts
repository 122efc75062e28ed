import type { Db, DialectName } from '../../db/database.ts';
import { type Actor, canReadExam } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound, NotFoundMessage } from '../errors.ts';
import { findVisibleExam } from '../exams/exam-access.ts';
import { findExam } from '../exams/exams.repository.ts';
import { has, type Params } from '../input.ts';
import { type ListQuery, type Page, parseListQuery } from '../listing.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { findVisibleSession, type SessionInExam } from '../student-sessions/session-access.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { findStudentSession } from '../student-sessions/student-sessions.repository.ts';
import {
  canReviewSession,
  type QueueEntry,
  readQueueVerdicts,
  readVerdictInput,
  repeatsLatest,
  REVIEW_QUEUE_LIST_FIELDS,
  reviewedEventFor,
  reviewedValue,
  secondReviewFor,
  type SessionReview,
  type SessionReviewedEvent,
  type VerdictInput,
} from './review.ts';
import {
  findLatestReviewEntry,
  findReviewerName,
  findSessionIdByRoomToken,
  insertReviewEntry,
  listReviewEntries,
  listReviewQueue,
  lockSessionForReview,
} from './reviews.repository.ts';

const ROOM_TOKEN = /^[0-9a-f]{32}$/i;

/** The outcome of recording a verdict: the review as it now is, and whether a new entry was added. */
export interface RecordedVerdict {
  readonly review: SessionReview;
  /** False when the request repeated the newest entry exactly (a retry): nothing was written. */
  readonly changed: boolean;
}

/**
 * Review verdicts and the review queue (docs/review.md). Ids are taken as sent (a 404 names them so).
 */
export interface ReviewsService {
  /** The review of a session the actor may see. Throws NotFound (Student Session). */
  get(actor: Actor, sessionId: string | number): Promise<SessionReview>;
  /**
   * Records `verdict` (required) with `comment` on a session, under the second-review rule.
   * Returns the review; throws NotFound, Forbidden (the actor may not review, or would confirm its
   * own violation), ParamMissing or Invalid (`verdict`, `comment`).
   */
  record(actor: Actor, sessionId: string | number, params: Params): Promise<RecordedVerdict>;
  /**
   * As record, for a verdict already read (a session update's `reviewed`). Returns the review;
   * throws NotFound or Forbidden.
   */
  recordInput(actor: Actor, sessionId: string | number, input: VerdictInput): Promise<RecordedVerdict>;
  /**
   * The session with this room token, for a caller who may review it (compat `reviewable`).
   * Returns it; throws NotFoundMessage naming the token for anyone else, as if it did not exist.
   */
  reviewable(actor: Actor, token: string): Promise<StudentSession>;
  /**
   * One page of an exam's review queue: its finished sessions, the highest suspicion score first,
   * then the most incidents, unless `sort` says otherwise; filtered by `filter` and the `verdict` shortcut. Throws NotFound (Exam) or Invalid.
   */
  queue(actor: Actor, examId: string | number, params: Params): Promise<Page<QueueEntry>>;
}

/**
 * Called inside the transaction that recorded a settled verdict, so an event is written with the
 * change that causes it (outbox style). Resolves when written; a throw rolls the verdict back.
 */
export type SessionReviewedHook = (trx: Db, event: SessionReviewedEvent) => Promise<void>;

/**
 * Builds the review use cases over the database and the clock. `onReviewed` is the place the
 * `student_session.reviewed` webhook is queued from (docs/review.md, "API"). Returns the service;
 * building it throws nothing.
 */
export function createReviewsService(deps: {
  readonly db: Db;
  readonly dialect: DialectName;
  readonly clock: Clock;
  readonly onReviewed?: SessionReviewedHook | undefined;
}): ReviewsService {
  const { db, dialect, clock, onReviewed } = deps;

  async function reviewOf(found: SessionInExam, reader: Db = db): Promise<SessionReview> {
    const institute = await findInstitute(reader, found.exam.instituteId);
    return {
      studentSessionId: found.session.id,
      initialReviewed: found.session.reviewed,
      history: await listReviewEntries(reader, found.session.id),
      secondReviewRequired: institute?.secondReviewRequired ?? false,
    };
  }

  async function recordFound(
    actor: Actor,
    sessionId: string | number,
    found: SessionInExam,
    input: VerdictInput,
  ): Promise<RecordedVerdict> {
    if (!canReviewSession(actor, found.exam)) throw new Forbidden();
    return db.transaction().execute(async (trx) => {
      // One verdict at a time per session: the second of two concurrent ones sees the first.
      const locked = await lockSessionForReview(trx, dialect, found.session.id);
      if (locked === undefined) throw new NotFound('Student Session', sessionId);
      const institute = await findInstitute(trx, found.exam.instituteId);
      const previous = await findLatestReviewEntry(trx, found.session.id);
      const secondReview = secondReviewFor(input, actor, previous, institute?.secondReviewRequired ?? false);
      if (repeatsLatest(input, actor, previous, secondReview)) {
        return { review: await reviewOf(found, trx), changed: false };
      }
      const entry = await insertReviewEntry(trx, {
        studentSessionId: found.session.id,
        previousId: previous?.id ?? 0,
        verdict: input.verdict,
        comment: input.comment,
        reviewerId: actor.id,
        reviewerName: await findReviewerName(trx, actor.id),
        secondReview,
        createdAt: clock.now(),
        reviewed: reviewedValue({ verdict: input.verdict, secondReview }),
      });
      // webhook: student_session.reviewed
      // A settled verdict (passed, suspicious, a violation needing no more confirmation) is the
      // event; `onReviewed` queues the delivery in this transaction, so it is sent only if the
      // verdict is kept, and never lost.
      const event = reviewedEventFor(entry, found.exam);
      if (event !== undefined && onReviewed !== undefined) await onReviewed(trx, event);
      return { review: await reviewOf(found, trx), changed: true };
    });
  }

  return {
    async get(actor, sessionId) {
      return reviewOf(await findVisibleSession(db, actor, sessionId));
    },

    async record(actor, sessionId, params) {
      const found = await findVisibleSession(db, actor, sessionId);
      if (!canReviewSession(actor, found.exam)) throw new Forbidden();
      return recordFound(actor, sessionId, found, readVerdictInput(params));
    },

    async recordInput(actor, sessionId, input) {
      return recordFound(actor, sessionId, await findVisibleSession(db, actor, sessionId), input);
    },

    async reviewable(actor, token) {
      const missing = new NotFoundMessage(`Couldn't find Student Session with 'token'=${token}`);
      // A room token is 32 hex characters (contract §6); anything else names no session.
      const id = ROOM_TOKEN.test(token) ? await findSessionIdByRoomToken(db, token.toLowerCase()) : undefined;
      const session = id === undefined ? undefined : await findStudentSession(db, id);
      if (session === undefined) throw missing;
      const exam = await findExam(db, session.examId);
      if (exam === undefined || exam.status === 'deleted' || !canReadExam(actor, exam)) throw missing;
      if (!canReviewSession(actor, exam)) throw missing;
      return session;
    },

    async queue(actor, examId, params) {
      const exam = await findVisibleExam(db, actor, examId);
      const parsed = parseListQuery(params, REVIEW_QUEUE_LIST_FIELDS);
      const verdicts = readQueueVerdicts(params);
      // Without a sort, the most suspicious sessions come first (the automated flags' score), then
      // those with the most incidents (ties by id); without flags, that is incidents first.
      const sort = has(params, 'sort')
        ? parsed.sort
        : [
            // Open appeals first (docs/appeals.md): a candidate waits on them.
            { column: 'appeal_open', direction: 'desc' as const, notNull: true },
            { column: 'suspicion_score', direction: 'desc' as const, notNull: true },
            { column: 'incidents_count', direction: 'desc' as const, notNull: true },
            { column: 'id', direction: 'asc' as const, notNull: true },
          ];
      const list: ListQuery = {
        ...parsed,
        sort,
        conditions:
          verdicts === undefined
            ? parsed.conditions
            : [...parsed.conditions, { column: 'verdict', op: 'in', values: verdicts }],
      };
      return listReviewQueue(db, dialect, exam.id, list);
    },
  };
}
