import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import { insertRoomIncident } from '../room/room.repository.ts';
import type { MobileStatus } from './mobile.ts';

/** The id of the session a pairing token names, or undefined. */
export async function findSessionIdByMobileToken(db: Db, mobileToken: string): Promise<number | undefined> {
  if (mobileToken.includes('\u0000')) return undefined;
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('mobile_token', '=', mobileToken)
    .executeTakeFirst();
  return row?.id;
}

/**
 * Sets the session's pairing token to `next` if it is still `current` (so two racing requests make
 * one token), the phone's state back to not paired. Returns true when this call set it; throws on a
 * clash with another session's token (never in practice: 128 random bits).
 */
export async function replaceMobileToken(
  db: Db,
  sessionId: number,
  current: string | null,
  next: string,
  now: number,
): Promise<boolean> {
  try {
    const result = await db
      .updateTable('student_sessions')
      .set({ mobile_token: next, mobile_status: 'not_paired', mobile_seen_at: null, updated_at: now })
      .where('id', '=', sessionId)
      .where('mobile_token', current === null ? 'is' : '=', current)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** A change of the phone's state, made only if its status is still `from`. */
export interface MobileChange {
  readonly from: MobileStatus;
  readonly to: MobileStatus;
  /** When the phone was heard from (unchanged when undefined). */
  readonly seenAt?: number;
  /** Its device description (unchanged when undefined). */
  readonly device?: string | null;
  /** The incident that goes with the change (a phone lost or back during the exam). */
  readonly incident?: { readonly kind: string; readonly comment: string; readonly offsetTime: number | null };
  readonly now: number;
}

/**
 * Applies `change` if the session's phone status is still `change.from`, with its incident in the
 * same transaction (so of two racing requests only one records it). Returns true when applied.
 */
export async function changeMobileState(db: Db, sessionId: number, change: MobileChange): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('student_sessions')
      .set({
        mobile_status: change.to,
        ...(change.seenAt === undefined ? {} : { mobile_seen_at: change.seenAt }),
        ...(change.device === undefined ? {} : { mobile_device: change.device }),
        updated_at: change.now,
      })
      .where('id', '=', sessionId)
      .where('mobile_status', '=', change.from)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    if (change.incident !== undefined) await insertRoomIncident(trx, sessionId, change.incident, change.now);
    return true;
  });
}

/** Notes that the phone was heard from at `seenAt`, its status unchanged. */
export async function touchMobile(db: Db, sessionId: number, seenAt: number): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({ mobile_seen_at: seenAt })
    .where('id', '=', sessionId)
    .execute();
}

/** A session a PIN and email name, with what pairing needs of it and its exam. */
export interface PinCandidate {
  readonly id: number;
  readonly status: string;
  readonly mobileToken: string | null;
}

/**
 * The sessions of exams with a phone camera (not deleted) whose PIN is `pin` and whose email is
 * `email` (either case), newest first.
 */
export async function sessionsByPin(db: Db, pin: number, email: string): Promise<PinCandidate[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select([
      'student_sessions.id as id',
      'student_sessions.status as status',
      'student_sessions.mobile_token as mobile_token',
      'exams.mobile_cam as mobile_cam',
      'exams.status as exam_status',
    ])
    .where('student_sessions.pin_code', '=', pin)
    .where((eb) => eb(eb.fn('lower', ['student_sessions.email']), '=', email.toLowerCase()))
    .orderBy('student_sessions.id', 'desc')
    .limit(20)
    .execute();
  return rows
    .filter((row) => Boolean(row.mobile_cam) && row.exam_status !== 'deleted')
    .map((row) => ({ id: row.id, status: row.status, mobileToken: row.mobile_token }));
}
