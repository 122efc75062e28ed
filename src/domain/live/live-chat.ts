import type { Db } from '../../db/database.ts';
import type { LiveEvents } from '../ports/live-events.ts';
import type { Clock } from '../clock.ts';
import { StateConflictMessage } from '../errors.ts';
import type { ExamType } from '../exams/exam.ts';
import type { Params } from '../input.ts';
import { SESSION_FINISHED } from '../room/room.ts';
import type { SessionStatus } from '../student-sessions/status.ts';
import {
  type LiveMessage,
  liveMessageJson,
  MESSAGES_LISTED,
  type MessageSender,
  NO_LIVE_PROCTOR,
  readMessageBody,
} from './live-message.ts';
import { insertLiveMessage, listLiveMessages } from './live-messages.repository.ts';

/**
 * The chat of a session, whoever writes: the proctors' V3 routes and the candidate's room both come
 * here once they know who asks (live.service.ts, room.service.ts), so the rules and the event are
 * the same on both sides.
 */
export interface LiveChat {
  /** The session's newest MESSAGES_LISTED messages, oldest first. */
  list(sessionId: number): Promise<LiveMessage[]>;
  /**
   * Stores a message (readMessageBody) from `from` and tells the live sockets (a `message` event),
   * once stored. Returns it. Throws StateConflictMessage (NO_LIVE_PROCTOR) for an exam that is not
   * `live_proctoring`, StateConflictMessage (SESSION_FINISHED) for a finished session, ParamMissing
   * or Invalid on `body`.
   */
  post(
    session: { readonly id: number; readonly examId: number; readonly status: SessionStatus },
    exam: { readonly type: ExamType },
    from: { readonly sender: MessageSender; readonly userId: number | null },
    params: Params,
  ): Promise<LiveMessage>;
}

/** Builds the chat over the database, the clock and the live event bus. Returns it; throws nothing. */
export function createLiveChat(deps: { db: Db; clock: Clock; liveEvents: LiveEvents }): LiveChat {
  const { db, clock, liveEvents } = deps;
  return {
    list: (sessionId) => listLiveMessages(db, sessionId, MESSAGES_LISTED),

    async post(session, exam, from, params) {
      if (exam.type !== 'live_proctoring') throw new StateConflictMessage(NO_LIVE_PROCTOR);
      if (session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
      const body = readMessageBody(params);
      const message = await insertLiveMessage(db, {
        sessionId: session.id,
        sender: from.sender,
        userId: from.userId,
        body,
        now: clock.now(),
      });
      liveEvents.emit({
        kind: 'message',
        examId: session.examId,
        sessionId: session.id,
        message: liveMessageJson(message),
      });
      return message;
    },
  };
}
