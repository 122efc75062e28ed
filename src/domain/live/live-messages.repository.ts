import type { Db } from '../../db/database.ts';
import { type LiveMessage, MESSAGE_SENDERS, type MessageSender } from './live-message.ts';

interface MessageRow {
  readonly id: number;
  readonly student_session_id: number;
  readonly sender: string;
  readonly user_id: number | null;
  readonly author: string | null;
  readonly body: string;
  readonly created_at: number;
}

function messageFromRow(row: MessageRow): LiveMessage {
  const sender = MESSAGE_SENDERS.find((known) => known === row.sender);
  if (sender === undefined) throw new Error(`live message ${row.id} has an unknown sender`);
  return {
    id: row.id,
    studentSessionId: row.student_session_id,
    sender,
    userId: row.user_id,
    author: row.author,
    body: row.body,
    createdAt: Number(row.created_at),
  };
}

/** The messages with their author's name (a left join: the candidate's have none). */
function messagesWithAuthors(db: Db) {
  return db
    .selectFrom('live_messages')
    .leftJoin('users', 'users.id', 'live_messages.user_id')
    .select([
      'live_messages.id',
      'live_messages.student_session_id',
      'live_messages.sender',
      'live_messages.user_id',
      'users.name as author',
      'live_messages.body',
      'live_messages.created_at',
    ]);
}

/** Stores a message of a session. Returns it as stored, with its author's name. */
export async function insertLiveMessage(
  db: Db,
  message: {
    readonly sessionId: number;
    readonly sender: MessageSender;
    readonly userId: number | null;
    readonly body: string;
    readonly now: number;
  },
): Promise<LiveMessage> {
  const { id } = await db
    .insertInto('live_messages')
    .values({
      student_session_id: message.sessionId,
      sender: message.sender,
      user_id: message.userId,
      body: message.body,
      created_at: message.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const row = await messagesWithAuthors(db).where('live_messages.id', '=', id).executeTakeFirstOrThrow();
  return messageFromRow(row);
}

/** The newest `limit` messages of a session, oldest first. */
export async function listLiveMessages(db: Db, sessionId: number, limit: number): Promise<LiveMessage[]> {
  const rows = await messagesWithAuthors(db)
    .where('live_messages.student_session_id', '=', sessionId)
    .orderBy('live_messages.id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map(messageFromRow);
}
