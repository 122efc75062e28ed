import type { Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { StudentSessionsTable } from '../../db/tables.ts';
import type { StoredFile } from '../files/file.ts';

/** The two photos a session keeps: the candidate's ID card and face, as the API names them. */
export type PhotoKind = 'id_card' | 'face_photo';

function fileIdColumn(kind: PhotoKind): 'id_card_file_id' | 'face_photo_file_id' {
  return kind === 'id_card' ? 'id_card_file_id' : 'face_photo_file_id';
}

/** The four columns of a photo, set from a stored file or all null. */
function photoColumns(kind: PhotoKind, file: StoredFile | null): Updateable<StudentSessionsTable> {
  const id = file?.id ?? null;
  const name = file?.originalName ?? null;
  const type = file?.contentType ?? null;
  const size = file?.size ?? null;
  return kind === 'id_card'
    ? { id_card_file_id: id, id_card_file_name: name, id_card_content_type: type, id_card_file_size: size }
    : {
        face_photo_file_id: id,
        face_photo_file_name: name,
        face_photo_content_type: type,
        face_photo_file_size: size,
      };
}

/**
 * The file id of the session's photo: a number, null when it has none, undefined when there is no
 * such session.
 */
export async function photoFileId(
  db: Db,
  sessionId: number,
  kind: PhotoKind,
): Promise<number | null | undefined> {
  const column = fileIdColumn(kind);
  const row = await db
    .selectFrom('student_sessions')
    .select(column)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row === undefined ? undefined : row[column];
}

/**
 * Sets the session's photo to `file` (null: none) only if its file id is still `expected`, so two
 * concurrent changes cannot both believe they released the same file (compare-and-set; works alike
 * on both databases). Returns true when the row changed.
 */
export async function replacePhoto(
  db: Db,
  sessionId: number,
  kind: PhotoKind,
  expected: number | null,
  file: StoredFile | null,
  now: number,
): Promise<boolean> {
  const column = fileIdColumn(kind);
  const result = await db
    .updateTable('student_sessions')
    .set({ ...photoColumns(kind, file), updated_at: now })
    .where('id', '=', sessionId)
    .where((eb) => (expected === null ? eb(column, 'is', null) : eb(column, '=', expected)))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
