import type { Db } from '../../db/database.ts';
import type { LiveEvents } from '../ports/live-events.ts';
import type { RoomControl } from './live.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound, StateConflictMessage } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import type { ExamStaffService } from '../exams/exam-staff.service.ts';
import type { Params } from '../input.ts';
import { deadlineOf } from '../room/room.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { findStudentSession } from '../student-sessions/student-sessions.repository.ts';
import { findUser } from '../users/users.repository.ts';
import { createLiveChat } from './live-chat.ts';
import { isClockPaused } from './live-clock.ts';
import { admitSession, insertProctorIncident, pauseClock, resumeClock } from './live-controls.repository.ts';
import type { LiveMessage } from './live-message.ts';

/** The incident each proctor action records, by kind. */
export const PROCTOR_INCIDENTS = {
  live_admitted: (name: string, idCheck: boolean) =>
    idCheck ? `Admitted by ${name} after a live ID check` : `Admitted by ${name}`,
  clock_paused: 'The proctor paused the exam clock',
  clock_resumed: 'The proctor resumed the exam clock',
} as const;

/**
 * What a proctor does to a candidate live (docs/api-live.md): chat, admit from the setup, pause
 * and resume the candidate's clock. Every call is allowed to whoever may end the session
 * (canEndSession: the exam's managers, administrators, and the proctor assigned to the session) and
 * throws NotFound (Student Session) when the actor may not see it, Forbidden when it sees it but
 * may not act on it. Each change tells the live sockets (LiveEvents) once it is saved; the HTTP
 * layer's audit log records who did it.
 */
export interface LiveService {
  /** The session's newest 200 messages, oldest first. */
  messages(actor: Actor, sessionId: string | number): Promise<LiveMessage[]>;
  /** Writes a message to the candidate (LiveChat.post's rules and errors). Returns it. */
  postMessage(actor: Actor, sessionId: string | number, params: Params): Promise<LiveMessage>;
  /**
   * Admits the candidate after the live ID check: `in_setup` → `exam_not_started`, with an incident
   * naming who admitted. Returns the session as saved. Throws StateConflictMessage unless the
   * session is `in_setup`.
   */
  admit(actor: Actor, sessionId: string | number): Promise<StudentSession>;
  /**
   * Stops the candidate's clock (`clock_paused_at` now), with an incident. Returns the session as
   * saved. Throws StateConflictMessage unless the session is `exam_started` with its clock running
   * and its time not yet up.
   */
  pause(actor: Actor, sessionId: string | number): Promise<StudentSession>;
  /**
   * Starts the candidate's clock again (the pause's length added to `clock_paused_ms`), with an
   * incident. Returns the session as saved. Throws StateConflictMessage when the clock runs.
   */
  resume(actor: Actor, sessionId: string | number): Promise<StudentSession>;
}

/** Whole seconds since the session started, for an incident's `offset_time`; null before it started. */
function offsetAt(session: StudentSession, now: number): number | null {
  return session.startTime === null ? null : Math.max(0, Math.floor((now - session.startTime) / 1000));
}

/**
 * Throws StateConflictMessage unless the session's clock may be paused at `now`: the session is
 * `exam_started`, its clock runs (no pause, no rest break) and its time is not up.
 */
function assertPausable(session: StudentSession, exam: Exam, now: number): void {
  if (session.status !== 'exam_started') {
    throw new StateConflictMessage(
      `Only a started exam's clock can be paused (the session is ${session.status})`,
    );
  }
  if (isClockPaused(session)) throw new StateConflictMessage('The exam clock is already paused');
  // A rest break already stops the clock (deadline.ts): two stops at once would count twice.
  if (session.breakStartedAt !== null) {
    throw new StateConflictMessage('The candidate is on a rest break: the exam clock already stands still');
  }
  const deadline = deadlineOf(session, exam, now);
  if (deadline !== null && now >= deadline) {
    throw new StateConflictMessage("The candidate's time is up: the clock cannot be paused");
  }
}

/**
 * Builds the proctor's live actions over the database, the clock, the exam-staff service (who may
 * act) and the live event bus. Returns the service; building it throws nothing.
 */
export function createLiveService(deps: {
  db: Db;
  clock: Clock;
  examStaff: Pick<ExamStaffService, 'assertCanEnd'>;
  liveEvents: LiveEvents;
}): LiveService {
  const { db, clock, examStaff, liveEvents } = deps;
  const chat = createLiveChat({ db, clock, liveEvents });

  async function reread(id: number, asked: string | number): Promise<StudentSession> {
    const saved = await findStudentSession(db, id);
    if (saved === undefined) throw new NotFound('Student Session', asked);
    return saved;
  }

  function tell(session: StudentSession, action: RoomControl): void {
    liveEvents.emit({ kind: 'control', examId: session.examId, sessionId: session.id, action });
  }

  return {
    async messages(actor, sessionId) {
      const { session } = await examStaff.assertCanEnd(actor, sessionId);
      return chat.list(session.id);
    },

    async postMessage(actor, sessionId, params) {
      const { session, exam } = await examStaff.assertCanEnd(actor, sessionId);
      return chat.post(session, exam, { sender: 'proctor', userId: actor.id }, params);
    },

    async admit(actor, sessionId) {
      const { session, exam } = await examStaff.assertCanEnd(actor, sessionId);
      const name = (await findUser(db, actor.id))?.name ?? `user ${actor.id}`;
      const admitted = await db.transaction().execute(async (trx) => {
        const now = clock.now();
        if (!(await admitSession(trx, session.id, now))) return false;
        const comment = PROCTOR_INCIDENTS.live_admitted(name, exam.liveIdCheck);
        await insertProctorIncident(
          trx,
          session.id,
          { kind: 'live_admitted', comment, offsetTime: null },
          now,
        );
        return true;
      });
      const saved = await reread(session.id, sessionId);
      if (!admitted) {
        throw new StateConflictMessage(
          `Only a session in in_setup can be admitted (the session is ${saved.status})`,
        );
      }
      tell(saved, 'admitted');
      return saved;
    },

    async pause(actor, sessionId) {
      const { session, exam } = await examStaff.assertCanEnd(actor, sessionId);
      const now = clock.now();
      assertPausable(session, exam, now);
      const paused = await db.transaction().execute(async (trx) => {
        if (!(await pauseClock(trx, session.id, now))) return false;
        const offsetTime = offsetAt(session, now);
        const comment = PROCTOR_INCIDENTS.clock_paused;
        await insertProctorIncident(trx, session.id, { kind: 'clock_paused', comment, offsetTime }, now);
        return true;
      });
      const saved = await reread(session.id, sessionId);
      if (!paused) {
        // Another request paused or finished it meanwhile: answer as if it had come first.
        assertPausable(saved, exam, now);
        throw new StateConflictMessage('The exam clock changed meanwhile: try again');
      }
      tell(saved, 'paused');
      return saved;
    },

    async resume(actor, sessionId) {
      const { session } = await examStaff.assertCanEnd(actor, sessionId);
      const now = clock.now();
      const resumed = await db.transaction().execute(async (trx) => {
        if (!(await resumeClock(trx, session.id, now))) return false;
        await insertProctorIncident(
          trx,
          session.id,
          {
            kind: 'clock_resumed',
            comment: PROCTOR_INCIDENTS.clock_resumed,
            offsetTime: offsetAt(session, now),
          },
          now,
        );
        return true;
      });
      if (!resumed) throw new StateConflictMessage('The exam clock is not paused');
      const saved = await reread(session.id, sessionId);
      tell(saved, 'resumed');
      return saved;
    },
  };
}
