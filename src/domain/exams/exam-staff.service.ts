import type { Db } from '../../db/database.ts';
import {
  findManageableSession,
  findVisibleSession,
  type SessionInExam,
} from '../student-sessions/session-access.ts';
import type { ServerKeys } from '../../security/keys.ts';
import { type Actor, canCoManage, canEndSession, canProctor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { type Params, requiredString } from '../input.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { findStudentSession } from '../student-sessions/student-sessions.repository.ts';
import {
  countActiveProctoringSessions,
  setSessionProctor,
} from '../student-sessions/proctoring.repository.ts';
import type { User } from '../users/user.ts';
import { findUser } from '../users/users.repository.ts';
import { deleteComanager, insertComanager } from './comanagers.repository.ts';
import type { Exam } from './exam.ts';
import { findManageableExam } from './exam-access.ts';

/** A session with the proctor just assigned to it, and that proctor's current workload. */
export interface ProctorAssignment {
  readonly session: StudentSession;
  /**
   * How many of the sessions now assigned to the proctor are live: the candidate's `live_status` is
   * `live`, status not `exam_finished`, not archived, in an exam that is not deleted (this session
   * included when it qualifies).
   */
  readonly activeProctoringSessions: number;
}

/**
 * The people around an exam beyond its owner: co-managers (who get the owner's rights on the exam
 * and everything under it) and the proctor assigned to each student session. Ids are taken as sent
 * (a 404 names them so); parameters are the merged request parameters.
 */
export type { SessionInExam };

export interface ExamStaffService {
  /**
   * Makes the user `params.comanager_id` a co-manager of an exam the actor manages; adding one twice
   * keeps one. Returns the user. Throws NotFound (Exam; then User when the user is unknown or of
   * another institute), Forbidden (the actor sees the exam but may not manage it), ParamMissing on
   * `comanager_id`, Invalid on `comanager_id` (the exam's owner, or a user who may not co-manage).
   */
  addComanager(actor: Actor, examId: string | number, params: Params): Promise<User>;
  /**
   * Removes the user `params.comanager_id` from the co-managers of an exam the actor manages;
   * removing a user who is none is harmless. Returns the user. Throws as addComanager does, except
   * that a user still listed as co-manager is always removed, whatever its role now is.
   */
  removeComanager(actor: Actor, examId: string | number, params: Params): Promise<User>;
  /**
   * Assigns the user `params.proctor_id` to proctor a session of an exam the actor manages (replacing
   * any other proctor; assigning the same one again changes nothing). Returns the session as saved
   * and the proctor's active sessions. Throws NotFound (Student Session; then User when the user is
   * unknown or of another institute), Forbidden, ParamMissing or Invalid on `proctor_id` (a user who
   * may not proctor).
   */
  assignProctor(actor: Actor, sessionId: string | number, params: Params): Promise<ProctorAssignment>;
  /**
   * Removes the session's proctor, if any. Returns the session as saved. Throws NotFound (Student
   * Session) or Forbidden.
   */
  unassignProctor(actor: Actor, sessionId: string | number): Promise<StudentSession>;
  /**
   * Checks that the actor may end the session (`canEndSession`: whoever manages the exam, and the
   * proctor assigned to the session). Returns the session with its exam. Throws NotFound (Student
   * Session) when the actor may not see it, Forbidden when it sees it but may not end it.
   */
  assertCanEnd(actor: Actor, sessionId: string | number): Promise<SessionInExam>;
}

const COMANAGER = 'comanager_id';
const PROCTOR = 'proctor_id';

/**
 * Builds the exam-staff use cases over the database and the clock (`keys` is accepted for the
 * common service signature and not needed here). Returns the service; building it throws nothing.
 */
export function createExamStaffService(deps: { db: Db; clock: Clock; keys: ServerKeys }): ExamStaffService {
  const { db, clock } = deps;

  /**
   * The user the parameter `field` names, who must belong to the exam's institute. Throws
   * ParamMissing, or NotFound (User) with the id as sent when it is unknown or of another institute.
   */
  async function instituteUser(exam: Exam, params: Params, field: string): Promise<User> {
    const sent = requiredString(params, field);
    const id = parseId(sent);
    const user = id === undefined ? undefined : await findUser(db, id);
    if (user === undefined || user.instituteId !== exam.instituteId) throw new NotFound('User', sent);
    return user;
  }

  /** Throws Invalid on `comanager_id` when the user may not be a co-manager of the exam. */
  function checkComanager(user: User, exam: Exam): void {
    if (user.id === exam.userId) throw new Invalid(COMANAGER, 'is the owner of the exam');
    if (!canCoManage(user, exam)) throw new Invalid(COMANAGER, 'must be a teacher or an administrator');
  }

  /** The session and its exam when the actor may see them; NotFound otherwise, whatever the reason. */

  async function reread(session: StudentSession, id: string | number): Promise<StudentSession> {
    const saved = await findStudentSession(db, session.id);
    if (saved === undefined) throw new NotFound('Student Session', id);
    return saved;
  }

  return {
    async addComanager(actor, examId, params) {
      const exam = await findManageableExam(db, actor, examId);
      const user = await instituteUser(exam, params, COMANAGER);
      checkComanager(user, exam);
      await db.transaction().execute((trx) => insertComanager(trx, exam.id, user.id, clock.now()));
      return user;
    },

    async removeComanager(actor, examId, params) {
      const exam = await findManageableExam(db, actor, examId);
      const user = await instituteUser(exam, params, COMANAGER);
      // A listed co-manager whose role has since changed must still be removable.
      if (!exam.comanagerIds.includes(user.id)) checkComanager(user, exam);
      await db.transaction().execute((trx) => deleteComanager(trx, exam.id, user.id, clock.now()));
      return user;
    },

    async assignProctor(actor, sessionId, params) {
      const { session, exam } = await findManageableSession(db, actor, sessionId);
      const proctor = await instituteUser(exam, params, PROCTOR);
      if (!canProctor(proctor, exam)) throw new Invalid(PROCTOR, 'must be a proctor or an administrator');
      await setSessionProctor(db, session.id, proctor.id, clock.now());
      const [saved, activeProctoringSessions] = await Promise.all([
        reread(session, sessionId),
        countActiveProctoringSessions(db, proctor.id),
      ]);
      return { session: saved, activeProctoringSessions };
    },

    async unassignProctor(actor, sessionId) {
      const { session } = await findManageableSession(db, actor, sessionId);
      await setSessionProctor(db, session.id, null, clock.now());
      return reread(session, sessionId);
    },

    async assertCanEnd(actor, sessionId) {
      const found = await findVisibleSession(db, actor, sessionId);
      if (!canEndSession(actor, found.exam, found.session)) throw new Forbidden();
      return found;
    },
  };
}
