import { StateConflict } from '../errors.ts';

/** Student-session statuses in the order a session passes through them (contract §6). */
export const SESSION_STATUSES = [
  'registered',
  'email_sent',
  'after_check_req',
  'in_setup',
  'exam_not_started',
  'exam_started',
  'exam_finished',
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const CHECK_VALUES = ['not_started', 'not_completed', 'succeeded', 'failed', 'skipped'] as const;
export type CheckValue = (typeof CHECK_VALUES)[number];

export const TRANSCODING_STATUSES = [
  'not_sent_to_queue',
  'queued',
  'processing',
  'completed',
  'failed',
] as const;
export type TranscodingStatus = (typeof TRANSCODING_STATUSES)[number];

/**
 * The transition table: for each status, the statuses a session may move to. Status only moves
 * forward (any number of steps, so a student who skips the requirement checks jumps ahead), except
 * that a student may step back from `exam_not_started` into `in_setup` to redo the setup.
 * Staying in the same status is not a move.
 */
export const TRANSITIONS: Readonly<Record<SessionStatus, readonly SessionStatus[]>> = {
  registered: [
    'email_sent',
    'after_check_req',
    'in_setup',
    'exam_not_started',
    'exam_started',
    'exam_finished',
  ],
  email_sent: ['after_check_req', 'in_setup', 'exam_not_started', 'exam_started', 'exam_finished'],
  after_check_req: ['in_setup', 'exam_not_started', 'exam_started', 'exam_finished'],
  in_setup: ['exam_not_started', 'exam_started', 'exam_finished'],
  exam_not_started: ['in_setup', 'exam_started', 'exam_finished'],
  exam_started: ['exam_finished'],
  exam_finished: [],
};

/** True when the table allows moving from `from` to `to`. */
export function canMove(from: SessionStatus, to: SessionStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Returns `to` when the move is allowed; throws StateConflict naming both statuses otherwise. */
export function move(from: SessionStatus, to: SessionStatus): SessionStatus {
  if (!canMove(from, to)) throw new StateConflict(from, to);
  return to;
}

/** Reads a stored status; throws for a value outside the set (a corrupted row, not a client error). */
export function parseStatus(value: string): SessionStatus {
  const status = SESSION_STATUSES.find((known) => known === value);
  if (status === undefined) throw new Error(`unknown student session status ${value}`);
  return status;
}
