import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../ports/jobs.ts';
import type { LiveEvents } from '../ports/live-events.ts';
import type { Outbox } from '../mail/outbox-writer.ts';
import { candidateMailTranslator } from '../mail/mail-language.ts';
import { examEndedMail } from '../mail/templates.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound } from '../errors.ts';
import type { ExamStaffService } from '../exams/exam-staff.service.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { emitStudentSessionFinished } from '../webhooks/emit.ts';
import { queueAcsAction } from '../lti/acs.ts';
import { queueRecordingFinalisation } from '../recordings/recordings.service.ts';
import { endStudentSession } from './end-exam.repository.ts';
import { move } from './status.ts';
import type { StudentSession } from './student-session.ts';
import { findStudentSession } from './student-sessions.repository.ts';

/** The `end_reason` of a session ended through this action. */
export const END_REASON_API = 'api';

/** A session whose status keeps changing under us this many times is left alone (never in practice). */
const MAX_ROUNDS = 5;

/** The end_exam action (contract §7). */
export interface EndExamService {
  /**
   * Ends a session the actor may end (examStaff.assertCanEnd: whoever manages the exam, and the
   * proctor assigned to the session): status `exam_finished` from any earlier status, `end_time`
   * and `recording_ended_at` now, `end_reason` "api", and the student's notification written to
   * the outbox in the same transaction (unless the institute's `exam_finalized_emails_enabled` is
   * off); a running pause of the candidate's clock ends; once saved, the live sockets are told
   * (control `ended`). A session already finished is returned as it is: nothing changes, no email,
   * no event. Returns the
   * session as saved. Throws NotFound (Student Session) when it is missing or out of scope,
   * Forbidden when the actor sees it but may not end it.
   */
  endExam(actor: Actor, sessionId: string | number): Promise<StudentSession>;
}

/**
 * Builds the end_exam use case over the database, the clock, the outbox, the job queue (webhook, LTI
 * control message, recording finalisation), the exam-staff service
 * that decides who may end a session and the live event bus. Returns the service; building it
 * throws nothing.
 */
export function createEndExamService(deps: {
  db: Db;
  clock: Clock;
  outbox: Outbox;
  jobs: JobQueue;
  examStaff: Pick<ExamStaffService, 'assertCanEnd'>;
  liveEvents: LiveEvents;
}): EndExamService {
  const { db, clock, outbox, jobs, examStaff, liveEvents } = deps;
  return {
    async endExam(actor, sessionId) {
      const { session: seen, exam } = await examStaff.assertCanEnd(actor, sessionId);
      let ended = false;
      const saved = await db.transaction().execute(async (trx) => {
        for (let round = 0; round < MAX_ROUNDS; round += 1) {
          const current = await findStudentSession(trx, seen.id);
          if (current === undefined) throw new NotFound('Student Session', sessionId);
          if (current.status === 'exam_finished') return current;
          const now = clock.now();
          const to = move(current.status, 'exam_finished');
          const moved = await endStudentSession(trx, current.id, {
            from: current.status,
            to,
            reason: END_REASON_API,
            now,
          });
          // Another request moved the session meanwhile: look again (it may have ended it).
          if (!moved) continue;
          await emitStudentSessionFinished(jobs, trx, current.id, now);
          // A Proctoring Services launch whose platform takes `terminate` is told (docs/lti.md).
          await queueAcsAction(jobs, trx, current.id, 'terminate', now);
          await queueRecordingFinalisation(trx, { clock, jobs }, current.id);
          const institute = await findInstitute(trx, exam.instituteId);
          if (institute?.examFinalizedEmailsEnabled === true) {
            const t = await candidateMailTranslator(trx, exam, current.id);
            await outbox.write(trx, {
              kind: 'exam_finished',
              to: current.email,
              message: examEndedMail(
                { studentName: current.name, examName: exam.name, endedAt: now, timeZone: exam.timezone },
                t,
              ),
              studentSessionId: current.id,
            });
          }
          const result = await findStudentSession(trx, current.id);
          if (result === undefined) throw new NotFound('Student Session', sessionId);
          ended = true;
          return result;
        }
        throw new Error(`student session ${seen.id} kept changing status; not ended`);
      });
      if (ended) liveEvents.emit({ kind: 'control', examId: exam.id, sessionId: saved.id, action: 'ended' });
      return saved;
    },
  };
}
