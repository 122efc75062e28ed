import type { Db, DialectName } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import { ATTACHMENT_TYPES } from '../../storage/content-type.ts';
import type { Upload } from '../../storage/upload.ts';
import { type Actor, canDecideAppeal } from '../access.ts';
import { insertAuditEvent } from '../audit/audit.repository.ts';
import type { AuditClient } from '../audit/audit.service.ts';
import { USER_AGENT_MAX } from '../audit/audit-event.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, NotFoundMessage, StateConflictMessage } from '../errors.ts';
import { findExam } from '../exams/exams.repository.ts';
import type { FilesService } from '../files/files.service.ts';
import type { Params } from '../input.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { candidateMailTranslator } from '../mail/mail-language.ts';
import { createOutbox } from '../mail/outbox-writer.ts';
import { appealDecisionMail, verdictNoticeMail } from '../mail/templates.ts';
import type { JobQueue } from '../ports/jobs.ts';
import { reviewedEventFor, type ReviewEntry, type SessionReviewedEvent } from '../reviews/review.ts';
import {
  findLatestReviewEntry,
  findReviewerName,
  insertReviewEntry,
  listReviewEntries,
  lockSessionForReview,
} from '../reviews/reviews.repository.ts';
import { NO_ROOM } from '../room/room.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import { findStudentSession } from '../student-sessions/student-sessions.repository.ts';
import { emitStudentSessionAppealDecided, emitStudentSessionAppealed } from '../webhooks/emit.ts';
import {
  type Appeal,
  APPEAL_FILES_MAX,
  appealDeadline,
  type AppealWithVerdict,
  finalVerdictOf,
  gaveTheVerdict,
  isNewFinalVerdict,
  OVERTURNED_VERDICT,
  readDecisionInput,
  readStatement,
} from './appeal.ts';
import { decideAppeal, findAppealOfSession, findSessionByToken, insertAppeal } from './appeals.repository.ts';

const ROOM_TOKEN = /^[0-9a-f]{32}$/i;
/** How long a download address of an appeal's file works (a reviewer opens it from the console). */
const FILE_URL_SECONDS = 15 * 60;

/** The audit actions of appeals (docs/audit-log.md). */
export const APPEAL_SUBMITTED_AUDIT_ACTION = 'appeal_submitted';
export const APPEAL_DECIDED_AUDIT_ACTION = 'appeal_decided';

/** The 409 sentences of the room's appeal route (docs/room-api.md). */
export const NOT_APPEALABLE = 'There is no final verdict to appeal, or the appeal period is over';
export const ALREADY_APPEALED = 'An appeal was already submitted for this session';
export const ALREADY_DECIDED = 'This appeal was already decided';
const NO_APPEAL = (id: string | number) => `Couldn't find Appeal for Student Session with 'id'=${id}`;

/** What the candidate's finished page shows (GET /api/room/:token/appeal). Times epoch ms. */
export interface RoomAppealState {
  /** The verdict the candidate may contest or contested (`suspicious`, `violation`), else null. */
  readonly verdict: string | null;
  /** True while a new appeal would be accepted. */
  readonly open: boolean;
  /** The last instant an appeal is accepted, when there is a contestable verdict. */
  readonly deadline: number | null;
  readonly appeal: Appeal | undefined;
}

/** Appeals against final verdicts (docs/appeals.md). */
export interface AppealsService {
  /** The appeal state of the session with this room token. Throws NotFoundMessage (NO_ROOM). */
  roomState(token: string): Promise<RoomAppealState>;
  /**
   * The candidate appeals: `statement` (required) and up to APPEAL_FILES_MAX files (any field name).
   * Returns the new appeal. Throws NotFoundMessage (NO_ROOM), StateConflictMessage (no final
   * contestable verdict, period over, already appealed), ParamMissing/Invalid (`statement`,
   * `files`), UnsupportedMediaType for a file type not accepted.
   */
  submit(token: string, params: Params, uploads: readonly Upload[], client?: AuditClient): Promise<Appeal>;
  /** The appeal of a session the actor may see. Throws NotFound (Student Session), NotFoundMessage (none). */
  get(actor: Actor, sessionId: string | number): Promise<AppealWithVerdict>;
  /**
   * Decides an open appeal (`decision` upheld | overturned, `comment`). Overturned records the verdict
   * `passed` by the actor in the review history. Returns the appeal. Throws NotFound, Forbidden (may
   * not review), NotFoundMessage (no appeal), ParamMissing/Invalid (`decision`, `comment`; Invalid
   * `decision` for the reviewer who gave the verdict), StateConflictMessage (already decided).
   */
  decide(
    actor: Actor,
    sessionId: string | number,
    params: Params,
    client?: AuditClient,
  ): Promise<AppealWithVerdict>;
  /**
   * Called in the transaction of every settled verdict (the reviews service's hook): when it makes a
   * `suspicious` or `violation` verdict final, writes the candidate's verdict notice into the outbox,
   * in their language, with the appeal deadline. Resolves when written (or when nothing is due).
   */
  onVerdictSettled(trx: Db, event: SessionReviewedEvent): Promise<void>;
}

/**
 * Builds the appeals use cases. `onReviewed` is the reviews service's hook, called for the verdict
 * an overturned appeal records (so `student_session.reviewed` goes out as for any verdict).
 */
export function createAppealsService(deps: {
  readonly db: Db;
  readonly dialect: DialectName;
  readonly clock: Clock;
  readonly files: FilesService;
  readonly jobs: JobQueue;
  readonly publicUrl: string;
  readonly onReviewed?: ((trx: Db, event: SessionReviewedEvent) => Promise<void>) | undefined;
}): AppealsService {
  const { db, dialect, clock, files, jobs, publicUrl, onReviewed } = deps;
  const outbox = createOutbox({ clock, jobs });

  async function sessionOfToken(token: string) {
    const found = ROOM_TOKEN.test(token) ? await findSessionByToken(db, token.toLowerCase()) : undefined;
    const exam = found === undefined ? undefined : await findExam(db, found.examId);
    if (found === undefined || exam === undefined || exam.status === 'deleted') {
      throw new NotFoundMessage(NO_ROOM);
    }
    return { sessionId: found.id, exam };
  }

  async function stateOf(reader: Db, sessionId: number, instituteId: number): Promise<RoomAppealState> {
    const [history, appeal, institute] = await Promise.all([
      listReviewEntries(reader, sessionId),
      findAppealOfSession(reader, sessionId),
      findInstitute(reader, instituteId),
    ]);
    const final = finalVerdictOf(history);
    const appealed = appeal === undefined ? undefined : history.find((entry) => entry.id === appeal.reviewId);
    if (final === undefined) {
      return { verdict: appealed?.verdict ?? null, open: false, deadline: null, appeal };
    }
    const deadline = appealDeadline(final.finalAt, institute?.appealPeriodDays ?? 14);
    return {
      verdict: appealed?.verdict ?? final.entry.verdict,
      open: appeal === undefined && clock.now() <= deadline,
      deadline,
      appeal,
    };
  }

  async function withVerdict(appeal: Appeal, history: readonly ReviewEntry[]): Promise<AppealWithVerdict> {
    const fileLinks = await Promise.all(
      appeal.files.map(async (file) => {
        try {
          return await files.address(file.fileId, FILE_URL_SECONDS);
        } catch {
          return null;
        }
      }),
    );
    return { appeal, appealed: history.find((entry) => entry.id === appeal.reviewId), fileLinks };
  }

  async function audit(
    trx: Db,
    event: { instituteId: number; userId: number | null; action: string; sessionId: number; status: number },
    client: AuditClient | undefined,
  ): Promise<void> {
    const agent = client?.userAgent ?? null;
    await insertAuditEvent(trx, {
      instituteId: event.instituteId,
      userId: event.userId,
      action: event.action,
      email: null,
      targetType: 'student_sessions',
      targetId: event.sessionId,
      status: event.status,
      ip: client?.ip ?? null,
      userAgent: agent === null ? null : agent.slice(0, USER_AGENT_MAX),
      createdAt: clock.now(),
    });
  }

  return {
    async roomState(token) {
      const { sessionId, exam } = await sessionOfToken(token);
      return stateOf(db, sessionId, exam.instituteId);
    },

    async submit(token, params, uploads, client) {
      const { sessionId, exam } = await sessionOfToken(token);
      const before = await stateOf(db, sessionId, exam.instituteId);
      if (before.appeal !== undefined) throw new StateConflictMessage(ALREADY_APPEALED);
      if (!before.open) throw new StateConflictMessage(NOT_APPEALABLE);
      const statement = readStatement(params);
      if (uploads.length > APPEAL_FILES_MAX) {
        throw new Invalid('files', `are too many (maximum is ${APPEAL_FILES_MAX})`);
      }
      if (uploads.some((upload) => upload.size === 0)) throw new Invalid('files', 'must not be empty');
      const kept: number[] = [];
      try {
        for (const upload of uploads)
          kept.push((await files.keep(upload, ATTACHMENT_TYPES, exam.instituteId)).id);
        return await db.transaction().execute(async (trx) => {
          // One decision at a time per session: a verdict changed meanwhile is seen here.
          await lockSessionForReview(trx, dialect, sessionId);
          const state = await stateOf(trx, sessionId, exam.instituteId);
          if (state.appeal !== undefined) throw new StateConflictMessage(ALREADY_APPEALED);
          const final = finalVerdictOf(await listReviewEntries(trx, sessionId));
          if (!state.open || final === undefined) throw new StateConflictMessage(NOT_APPEALABLE);
          const now = clock.now();
          const appeal = await insertAppeal(trx, {
            studentSessionId: sessionId,
            reviewId: final.entry.id,
            statement,
            submittedAt: now,
            fileIds: kept,
          });
          await audit(
            trx,
            {
              instituteId: exam.instituteId,
              userId: null,
              action: APPEAL_SUBMITTED_AUDIT_ACTION,
              sessionId,
              status: 201,
            },
            client,
          );
          // webhook: student_session.appealed
          await emitStudentSessionAppealed(jobs, trx, {
            studentSessionId: sessionId,
            examId: exam.id,
            instituteId: exam.instituteId,
            appealedVerdict: final.entry.verdict,
            submittedAt: now,
            filesCount: kept.length,
          });
          return appeal;
        });
      } catch (error) {
        await files.remove(kept);
        if (isUniqueViolation(error)) throw new StateConflictMessage(ALREADY_APPEALED);
        throw error;
      }
    },

    async get(actor, sessionId) {
      const found = await findVisibleSession(db, actor, sessionId);
      const appeal = await findAppealOfSession(db, found.session.id);
      if (appeal === undefined) throw new NotFoundMessage(NO_APPEAL(sessionId));
      return withVerdict(appeal, await listReviewEntries(db, found.session.id));
    },

    async decide(actor, sessionId, params, client) {
      const found = await findVisibleSession(db, actor, sessionId);
      if (!canDecideAppeal(actor, found.exam)) throw new Forbidden();
      const existing = await findAppealOfSession(db, found.session.id);
      if (existing === undefined) throw new NotFoundMessage(NO_APPEAL(sessionId));
      const input = readDecisionInput(params);
      return db.transaction().execute(async (trx) => {
        await lockSessionForReview(trx, dialect, found.session.id);
        const appeal = await findAppealOfSession(trx, found.session.id);
        if (appeal === undefined) throw new NotFoundMessage(NO_APPEAL(sessionId));
        const history = await listReviewEntries(trx, found.session.id);
        const appealed = history.find((entry) => entry.id === appeal.reviewId);
        if (gaveTheVerdict(actor, appealed)) {
          throw new Invalid('decision', 'may not be given by the reviewer who gave the appealed verdict');
        }
        if (appeal.status !== 'open') throw new StateConflictMessage(ALREADY_DECIDED);
        const now = clock.now();
        const decidedByName = await findReviewerName(trx, actor.id);
        let decisionReviewId: number | null = null;
        if (input.decision === 'overturned') {
          // The appealed verdict stays in the history; the new entry is the session's verdict now.
          const previous = await findLatestReviewEntry(trx, found.session.id);
          const entry = await insertReviewEntry(trx, {
            studentSessionId: found.session.id,
            previousId: previous?.id ?? 0,
            verdict: OVERTURNED_VERDICT,
            comment: input.comment,
            reviewerId: actor.id,
            reviewerName: decidedByName,
            secondReview: 'not_required',
            createdAt: now,
            reviewed: OVERTURNED_VERDICT,
          });
          decisionReviewId = entry.id;
          const event = reviewedEventFor(entry, found.exam);
          if (event !== undefined && onReviewed !== undefined) await onReviewed(trx, event);
        }
        const decided = await decideAppeal(trx, appeal.id, {
          status: input.decision,
          decidedBy: actor.id,
          decidedByName,
          decidedAt: now,
          comment: input.comment,
          decisionReviewId,
        });
        if (decided === undefined) throw new StateConflictMessage(ALREADY_DECIDED);
        await audit(
          trx,
          {
            instituteId: found.exam.instituteId,
            userId: actor.id,
            action: APPEAL_DECIDED_AUDIT_ACTION,
            sessionId: found.session.id,
            status: 200,
          },
          client,
        );
        const latest = await findLatestReviewEntry(trx, found.session.id);
        // webhook: student_session.appeal_decided
        await emitStudentSessionAppealDecided(jobs, trx, {
          studentSessionId: found.session.id,
          examId: found.exam.id,
          instituteId: found.exam.instituteId,
          appealedVerdict: appealed?.verdict ?? 'violation',
          status: input.decision,
          verdict: latest?.verdict ?? OVERTURNED_VERDICT,
          decidedBy: actor.id,
          decidedAt: now,
        });
        // The candidate hears of the decision in their language (the finished page shows it too).
        if (found.session.email.trim() !== '') {
          const t = await candidateMailTranslator(trx, found.exam, found.session.id);
          await outbox.write(trx, {
            kind: 'appeal_decision',
            to: found.session.email,
            studentSessionId: found.session.id,
            message: appealDecisionMail(
              {
                studentName: found.session.name,
                examName: found.exam.name,
                decision: input.decision,
                comment: input.comment,
                roomUrl: `${publicUrl}/room/${found.session.token}`,
              },
              t,
            ),
          });
        }
        return withVerdict(decided, await listReviewEntries(trx, found.session.id));
      });
    },

    async onVerdictSettled(trx, event) {
      const history = await listReviewEntries(trx, event.studentSessionId);
      if (!isNewFinalVerdict(history)) return;
      const final = finalVerdictOf(history);
      const session = await findStudentSession(trx, event.studentSessionId);
      const exam = await findExam(trx, event.examId);
      if (final === undefined || session === undefined || exam === undefined) return;
      if (session.email.trim() === '') return;
      // One appeal per session: a verdict changed after it offers none (the decision email told them).
      if ((await findAppealOfSession(trx, session.id)) !== undefined) return;
      const institute = await findInstitute(trx, exam.instituteId);
      const t = await candidateMailTranslator(trx, exam, session.id);
      await outbox.write(trx, {
        kind: 'verdict_notice',
        to: session.email,
        studentSessionId: session.id,
        message: verdictNoticeMail(
          {
            studentName: session.name,
            examName: exam.name,
            verdict: final.entry.verdict,
            appealUntil: appealDeadline(final.finalAt, institute?.appealPeriodDays ?? 14),
            roomUrl: `${publicUrl}/room/${session.token}`,
            timeZone: exam.timezone,
          },
          t,
        ),
      });
    },
  };
}
