import type { LiveMessageJson } from './live.ts';
import { Invalid } from '../errors.ts';
import { type Params, requiredString } from '../input.ts';

/**
 * The chat of a live-proctored session (docs/api-live.md): the candidate and whoever proctors the
 * session write to each other in plain text. Messages are kept with the session and never changed.
 */

export const MESSAGE_SENDERS = ['proctor', 'candidate'] as const;
export type MessageSender = (typeof MESSAGE_SENDERS)[number];

/** One message as stored. Times are epoch milliseconds. */
export interface LiveMessage {
  readonly id: number;
  readonly studentSessionId: number;
  readonly sender: MessageSender;
  /** The proctor who wrote it; null for the candidate's (and once the account is gone). */
  readonly userId: number | null;
  /** That proctor's name as the account now has it; null for the candidate's. */
  readonly author: string | null;
  readonly body: string;
  readonly createdAt: number;
}

/** The longest message, in characters (Unicode code points) after trimming. */
export const MESSAGE_MAX_CHARACTERS = 2000;

/** How many messages a list answers: the newest, oldest first. */
export const MESSAGES_LISTED = 200;

/** The 409 message of a chat message for an exam that is not live-proctored. */
export const NO_LIVE_PROCTOR = 'This exam has no live proctor';

/**
 * Reads a message's `body`: text, trimmed, 1 to MESSAGE_MAX_CHARACTERS characters. Returns it.
 * Throws ParamMissing (`body`) when absent or blank, Invalid (`body`) when too long or not text.
 */
export function readMessageBody(params: Params): string {
  const body = requiredString(params, 'body').trim();
  if ([...body].length > MESSAGE_MAX_CHARACTERS) {
    throw new Invalid('body', `is too long (maximum is ${MESSAGE_MAX_CHARACTERS} characters)`);
  }
  return body;
}

/** The message as the sockets, the room API and V3 answer it (protocol.ts). Returns the JSON object. */
export function liveMessageJson(message: LiveMessage): LiveMessageJson {
  return {
    id: message.id,
    student_session_id: message.studentSessionId,
    sender: message.sender,
    author: message.sender === 'proctor' ? message.author : null,
    body: message.body,
    created_at: new Date(message.createdAt).toISOString(),
  };
}
