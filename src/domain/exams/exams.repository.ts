import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { ExamsTable } from '../../db/tables.ts';
import { parseStoredFlagSettings, storedFlagSettingsText } from '../flags/settings.ts';
import type { ExamListScope } from '../access.ts';
import type { ListQuery, Page } from '../listing.ts';
import {
  EXAM_FLAGS,
  EXAM_STATUSES,
  EXAM_TEXTS,
  EXAM_TYPES,
  DEFAULT_RECORDING_QUALITY,
  RECORDING_QUALITIES,
  type Exam,
  type ExamAttributes,
  type ExamChanges,
  type ExamFlag,
  type ExamText,
} from './exam.ts';

type ExamRow = Selectable<ExamsTable>;

function examFromRow(row: ExamRow, comanagerIds: readonly number[]): Exam {
  const type = EXAM_TYPES.find((known) => known === row.type);
  const status = EXAM_STATUSES.find((known) => known === row.status);
  if (type === undefined || status === undefined)
    throw new Error(`exam ${row.id} has an unknown type or status`);
  const flags = {} as { [K in ExamFlag]: boolean };
  for (const [key, column] of Object.entries(EXAM_FLAGS) as [ExamFlag, keyof ExamRow][]) {
    flags[key] = Boolean(row[column]);
  }
  const texts = {} as { [K in ExamText]: string | null };
  for (const [key, column] of Object.entries(EXAM_TEXTS) as [ExamText, keyof ExamRow][]) {
    texts[key] = row[column] as string | null;
  }
  return {
    id: row.id,
    instituteId: row.institute_id,
    userId: row.user_id,
    name: row.name,
    type,
    status,
    durationMinutes: row.duration_minutes,
    startTime: row.start_time,
    endTime: row.end_time,
    examLanguage: row.exam_language,
    candidateLanguages: parseLanguageList(row.candidate_languages),
    timezone: row.timezone,
    flagSettings: parseStoredFlagSettings(row.flag_settings),
    // A value this version does not know (written by a newer one) records at the default.
    recordingQuality:
      RECORDING_QUALITIES.find((known) => known === row.recording_quality) ?? DEFAULT_RECORDING_QUALITY,
    ...flags,
    ...texts,
    comanagerIds,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The stored JSON array of an exam's candidate languages; null (every language) when absent or unreadable. */
function parseLanguageList(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return null;
    const tags = parsed.filter((tag): tag is string => typeof tag === 'string');
    return tags.length === 0 ? null : tags;
  } catch {
    return null;
  }
}

function columnsFrom(changes: ExamChanges): Updateable<ExamsTable> {
  const values: Record<string, unknown> = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.type !== undefined) values.type = changes.type;
  if (changes.status !== undefined) values.status = changes.status;
  if (changes.durationMinutes !== undefined) values.duration_minutes = changes.durationMinutes;
  if (changes.startTime !== undefined) values.start_time = changes.startTime;
  if (changes.endTime !== undefined) values.end_time = changes.endTime;
  if (changes.examLanguage !== undefined) values.exam_language = changes.examLanguage;
  if (changes.candidateLanguages !== undefined)
    values.candidate_languages =
      changes.candidateLanguages === null ? null : JSON.stringify(changes.candidateLanguages);
  if (changes.timezone !== undefined) values.timezone = changes.timezone;
  if (changes.flagSettings !== undefined) values.flag_settings = storedFlagSettingsText(changes.flagSettings);
  if (changes.recordingQuality !== undefined) values.recording_quality = changes.recordingQuality;
  for (const [key, column] of Object.entries({ ...EXAM_FLAGS, ...EXAM_TEXTS }) as [
    keyof ExamChanges,
    string,
  ][]) {
    if (changes[key] !== undefined) values[column] = changes[key];
  }
  return values;
}

async function comanagersOf(db: Db, examIds: readonly number[]): Promise<Map<number, number[]>> {
  const byExam = new Map<number, number[]>();
  if (examIds.length === 0) return byExam;
  const rows = await db
    .selectFrom('exam_comanagers')
    .select(['exam_id', 'user_id'])
    .where('exam_id', 'in', examIds)
    .orderBy('user_id')
    .execute();
  for (const row of rows) {
    const list = byExam.get(row.exam_id) ?? [];
    list.push(row.user_id);
    byExam.set(row.exam_id, list);
  }
  return byExam;
}

/** Inserts an exam owned by `userId`. Returns it. */
export async function insertExam(
  db: Db,
  owner: { instituteId: number; userId: number },
  attributes: ExamAttributes,
  now: number,
): Promise<Exam> {
  const values = {
    ...columnsFrom(attributes),
    institute_id: owner.instituteId,
    user_id: owner.userId,
    created_at: now,
    updated_at: now,
  } as Insertable<ExamsTable>;
  const row = await db.insertInto('exams').values(values).returningAll().executeTakeFirstOrThrow();
  return examFromRow(row, []);
}

/** The default language of an institute, or undefined when there is no such institute. */
export async function instituteLanguage(db: Db, instituteId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('institutes')
    .select('default_language')
    .where('id', '=', instituteId)
    .executeTakeFirst();
  return row?.default_language;
}

/** Returns the exam, or undefined (deleted exams included; callers decide). */
export async function findExam(db: Db, id: number): Promise<Exam | undefined> {
  const [row] = await examById(db, [id]);
  if (row === undefined) return undefined;
  const comanagers = await comanagersOfExam(db, [id]);
  return examFromRow(
    row,
    comanagers.map((comanager) => comanager.user_id),
  );
}

/** Reading one exam sits on most requests' path, so its two queries are compiled once. */
const examById = prepared([0] as [number], (db, id) =>
  db.selectFrom('exams').selectAll().where('id', '=', id),
);
const comanagersOfExam = prepared([0] as [number], (db, examId) =>
  db.selectFrom('exam_comanagers').select('user_id').where('exam_id', '=', examId).orderBy('user_id'),
);

/** Writes the changes and returns the exam as saved, or undefined if it vanished meanwhile. */
export async function updateExam(
  db: Db,
  id: number,
  changes: ExamChanges,
  now: number,
): Promise<Exam | undefined> {
  await db
    .updateTable('exams')
    .set({ ...columnsFrom(changes), updated_at: now })
    .where('id', '=', id)
    .execute();
  return findExam(db, id);
}

/**
 * One page of exams within `scope`. Deleted exams are left out unless the query filters on status.
 * Returns the page with the total count of matching exams.
 */
export async function listExams(db: Db, scope: ExamListScope, list: ListQuery): Promise<Page<Exam>> {
  let base = scopedExams(db, scope);
  if (!list.filtered.has('status')) base = base.where('exams.status', '<>', 'deleted');
  base = applyConditions(base, list, 'exams');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('exams'), list, 'exams').execute(),
  ]);
  return {
    items: await withComanagers(db, rows),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}

/** Every exam in `scope` that is not deleted, oldest first (V2 lists have no pages). */
export async function listAllExams(db: Db, scope: ExamListScope): Promise<Exam[]> {
  const rows = await scopedExams(db, scope)
    .where('exams.status', '<>', 'deleted')
    .selectAll('exams')
    .orderBy('exams.id')
    .execute();
  return withComanagers(db, rows);
}

async function withComanagers(db: Db, rows: readonly ExamRow[]): Promise<Exam[]> {
  const comanagers = await comanagersOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => examFromRow(row, comanagers.get(row.id) ?? []));
}

/** Exams within a listing scope (every status; callers leave out deleted ones as they need). */
export function scopedExams(db: Db, scope: ExamListScope) {
  let base = db.selectFrom('exams');
  if (scope.kind === 'institute') base = base.where('exams.institute_id', '=', scope.instituteId);
  if (scope.kind === 'own') {
    const { userId } = scope;
    base = base
      .where('exams.institute_id', '=', scope.instituteId)
      .where((eb) =>
        eb.or([
          eb('exams.user_id', '=', userId),
          eb.exists(
            eb
              .selectFrom('exam_comanagers')
              .select('exam_comanagers.exam_id')
              .whereRef('exam_comanagers.exam_id', '=', 'exams.id')
              .where('exam_comanagers.user_id', '=', userId),
          ),
        ]),
      );
  }
  return base;
}
