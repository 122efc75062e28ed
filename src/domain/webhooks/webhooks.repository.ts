import type { Db } from '../../db/database.ts';
import { type Accommodations, parseStoredAccommodations } from '../student-sessions/accommodations.ts';

/** Where an institute's webhooks go and how they are signed, as stored. */
export interface WebhookTarget {
  readonly callbackUrl: string | null;
  /** AES-256-GCM of the secret (security/keys.ts); null until an administrator generates one. */
  readonly secretEncrypted: string | null;
}

/** Returns the institute's callback address and encrypted secret, or undefined when it is gone. */
export async function findWebhookTarget(db: Db, instituteId: number): Promise<WebhookTarget | undefined> {
  const row = await db
    .selectFrom('institutes')
    .leftJoin('webhook_secrets', 'webhook_secrets.institute_id', 'institutes.id')
    .select(['institutes.callback_url', 'webhook_secrets.secret_encrypted'])
    .where('institutes.id', '=', instituteId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { callbackUrl: row.callback_url, secretEncrypted: row.secret_encrypted };
}

/** Returns the institute's callback address (null: none), or undefined when it is gone. */
export async function findCallbackUrl(db: Db, instituteId: number): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('institutes')
    .select('callback_url')
    .where('id', '=', instituteId)
    .executeTakeFirst();
  return row === undefined ? undefined : row.callback_url;
}

/**
 * Stores the institute's secret, replacing any earlier one (which stops working at once). Returns
 * true when an earlier secret was replaced.
 */
export async function saveWebhookSecret(
  db: Db,
  instituteId: number,
  secretEncrypted: string,
  now: number,
): Promise<boolean> {
  const replaced = await db
    .updateTable('webhook_secrets')
    .set({ secret_encrypted: secretEncrypted, created_at: now })
    .where('institute_id', '=', instituteId)
    .executeTakeFirst();
  if (Number(replaced.numUpdatedRows) === 1) return true;
  await db
    .insertInto('webhook_secrets')
    .values({ institute_id: instituteId, secret_encrypted: secretEncrypted, created_at: now })
    .onConflict((oc) =>
      oc.column('institute_id').doUpdateSet({ secret_encrypted: secretEncrypted, created_at: now }),
    )
    .execute();
  return false;
}

/** What the session events (finished, recording.ready, reviewed) say about a session, read in the transaction of the change. */
export interface FinishedSessionFacts {
  readonly id: number;
  readonly examId: number;
  readonly instituteId: number;
  readonly token: string;
  readonly endReason: string | null;
  readonly endTime: number | null;
  readonly accommodations: Accommodations;
  readonly breaksTaken: number;
}

/** Returns the facts of session `sessionId`, or undefined when it is gone. */
export async function findFinishedSessionFacts(
  db: Db,
  sessionId: number,
): Promise<FinishedSessionFacts | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select([
      'student_sessions.id',
      'student_sessions.exam_id',
      'exams.institute_id',
      'student_sessions.token',
      'student_sessions.end_reason',
      'student_sessions.end_time',
      'student_sessions.accommodations',
      'student_sessions.breaks_taken',
    ])
    .where('student_sessions.id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    examId: row.exam_id,
    instituteId: row.institute_id,
    token: row.token,
    endReason: row.end_reason,
    endTime: row.end_time === null ? null : Number(row.end_time),
    accommodations: parseStoredAccommodations(row.accommodations),
    breaksTaken: Number(row.breaks_taken),
  };
}

/** Returns the institute exam `examId` belongs to, or undefined when the exam is gone. */
export async function findExamInstitute(db: Db, examId: number): Promise<number | undefined> {
  const row = await db.selectFrom('exams').select('institute_id').where('id', '=', examId).executeTakeFirst();
  return row?.institute_id;
}
