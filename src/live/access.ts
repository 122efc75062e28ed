import type { Db } from '../db/database.ts';
import { type Actor, liveWatchScope } from '../domain/access.ts';
import { Forbidden, StateConflictMessage } from '../domain/errors.ts';
import { findVisibleExam } from '../domain/exams/exam-access.ts';
import type { MobileService } from '../domain/mobile/mobile.service.ts';
import { hasAssignedSessions, isWatchableSession } from '../domain/live/live-status.repository.ts';
import { SESSION_FINISHED } from '../domain/room/room.ts';
import type { RoomService } from '../domain/room/room.service.ts';
import type { LivePublisherIdentity } from './engine.ts';

/**
 * Who may open the live-proctoring sockets (docs/live-proctoring.md, "Sockets"), judged before the
 * WebSocket upgrade so a refusal is an ordinary JSON answer.
 */

/** The 409 message of a live socket of an exam whose type is not `live_proctoring`. */
export const NO_LIVE_PROCTOR = 'This exam has no live proctor';

/**
 * The candidate a room token names, for its live socket: the room's own lookup (so a started
 * session past its deadline is finished first). Returns the engine identity. Throws
 * NotFoundMessage (the room's NO_ROOM) for an unknown token, StateConflictMessage (409) for an exam
 * that is not `live_proctoring` or a finished session.
 */
export async function liveCandidate(
  room: Pick<RoomService, 'view'>,
  token: string,
): Promise<LivePublisherIdentity> {
  const { session, exam } = await room.view(token);
  if (exam.type !== 'live_proctoring') throw new StateConflictMessage(NO_LIVE_PROCTOR);
  if (session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
  return { examId: exam.id, sessionId: session.id, name: session.name };
}

/**
 * The candidate whose phone a pairing token names, for the phone's live socket: the phone service's
 * own lookup. Returns the engine identity, `device: 'phone'`. Throws NotFoundMessage (the phone's
 * NO_PHONE) for an unknown or replaced token, StateConflictMessage (409) for a finished session
 * (SESSION_FINISHED) or an exam that is not `live_proctoring` (NO_LIVE_PROCTOR).
 */
export async function livePhone(
  mobile: Pick<MobileService, 'sessionOfPhone'>,
  mobileToken: string,
): Promise<LivePublisherIdentity> {
  const { session, exam } = await mobile.sessionOfPhone(mobileToken);
  if (exam.type !== 'live_proctoring') throw new StateConflictMessage(NO_LIVE_PROCTOR);
  if (session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
  return { examId: exam.id, sessionId: session.id, name: session.name, device: 'phone' };
}

/** Which candidates of an exam a proctor socket may watch. */
export interface LiveWatch {
  readonly examId: number;
  /** True for whoever manages the exam: every session of it. */
  readonly watchesAll: boolean;
  /** Read from the database each time (assignments change during an exam). */
  readonly mayWatch: (sessionId: number) => Promise<boolean>;
}

/**
 * Whether the actor may open the proctor socket of exam `examId` (text of the path): the exam's
 * managers (administrators included) watch every session, a proctor of the institute the sessions
 * assigned to it. Returns what it may watch. Throws NotFound (Exam) for an exam missing, deleted or
 * out of the actor's scope, Forbidden for an actor who may see the exam but not proctor in it (a
 * proctor without a session assigned there), StateConflictMessage (409) for an exam that is not
 * `live_proctoring`.
 */
export async function liveWatch(db: Db, actor: Actor, examId: string): Promise<LiveWatch> {
  const exam = await findVisibleExam(db, actor, examId);
  const scope = liveWatchScope(actor, exam);
  if (scope === undefined) throw new Forbidden();
  if (scope === 'assigned' && !(await hasAssignedSessions(db, exam.id, actor.id))) throw new Forbidden();
  if (exam.type !== 'live_proctoring') throw new StateConflictMessage(NO_LIVE_PROCTOR);
  const proctorId = scope === 'all' ? null : actor.id;
  return {
    examId: exam.id,
    watchesAll: scope === 'all',
    mayWatch: (sessionId) => isWatchableSession(db, exam.id, sessionId, proctorId),
  };
}
