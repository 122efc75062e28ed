import type { Db } from '../../db/database.ts';

/** A data key as stored: still wrapped under the server key. */
export interface WrappedDataKey {
  readonly instituteId: number;
  readonly version: number;
  readonly wrapped: string;
}

/** The newest data key of an institute, or undefined when it has none yet. */
export async function newestDataKey(db: Db, instituteId: number): Promise<WrappedDataKey | undefined> {
  const row = await db
    .selectFrom('data_keys')
    .select(['institute_id', 'version', 'wrapped_key'])
    .where('institute_id', '=', instituteId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { instituteId, version: row.version, wrapped: row.wrapped_key };
}

/** One version of an institute's data key, or undefined. */
export async function findDataKey(
  db: Db,
  instituteId: number,
  version: number,
): Promise<WrappedDataKey | undefined> {
  const row = await db
    .selectFrom('data_keys')
    .select(['wrapped_key'])
    .where('institute_id', '=', instituteId)
    .where('version', '=', version)
    .executeTakeFirst();
  return row === undefined ? undefined : { instituteId, version, wrapped: row.wrapped_key };
}

/**
 * Records a new data key unless that version exists already (another process made it first).
 * Returns true when this one was recorded.
 */
export async function insertDataKey(db: Db, key: WrappedDataKey, createdAt: number): Promise<boolean> {
  const result = await db
    .insertInto('data_keys')
    .values({
      institute_id: key.instituteId,
      version: key.version,
      wrapped_key: key.wrapped,
      created_at: createdAt,
    })
    .onConflict((conflict) => conflict.columns(['institute_id', 'version']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Every data key, in institute and version order. */
export async function allDataKeys(db: Db): Promise<WrappedDataKey[]> {
  const rows = await db
    .selectFrom('data_keys')
    .select(['institute_id', 'version', 'wrapped_key'])
    .orderBy('institute_id')
    .orderBy('version')
    .execute();
  return rows.map((row) => ({
    instituteId: row.institute_id,
    version: row.version,
    wrapped: row.wrapped_key,
  }));
}

/** Replaces a key's wrapping, only while it is still `from` (a concurrent rewrap wins once). Returns true when replaced. */
export async function rewrapDataKey(db: Db, key: WrappedDataKey, to: string): Promise<boolean> {
  const result = await db
    .updateTable('data_keys')
    .set({ wrapped_key: to })
    .where('institute_id', '=', key.instituteId)
    .where('version', '=', key.version)
    .where('wrapped_key', '=', key.wrapped)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every institute's id. */
export async function instituteIds(db: Db): Promise<number[]> {
  const rows = await db.selectFrom('institutes').select('id').orderBy('id').execute();
  return rows.map((row) => row.id);
}

/** The institute whose data a student session's files are (its exam's), or undefined for no such session. */
export async function instituteOfSession(db: Db, sessionId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select('exams.institute_id')
    .where('student_sessions.id', '=', sessionId)
    .executeTakeFirst();
  return row?.institute_id;
}

/** The institute an exam belongs to, or undefined for no such exam. */
export async function instituteOfExam(db: Db, examId: number): Promise<number | undefined> {
  const row = await db.selectFrom('exams').select('institute_id').where('id', '=', examId).executeTakeFirst();
  return row?.institute_id;
}
