import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { FilesTable } from '../../db/tables.ts';
import type { StoredFile } from './file.ts';

function fileFromRow(row: Selectable<FilesTable>): StoredFile {
  return {
    id: row.id,
    storageKey: row.storage_key,
    originalName: row.original_name,
    contentType: row.content_type,
    size: row.size,
    sha256: row.sha256,
    createdAt: row.created_at,
  };
}

/** Records a stored object. Returns the record. */
export async function insertFile(db: Db, file: Omit<StoredFile, 'id'>): Promise<StoredFile> {
  const row = await db
    .insertInto('files')
    .values({
      storage_key: file.storageKey,
      original_name: file.originalName,
      content_type: file.contentType,
      size: file.size,
      sha256: file.sha256,
      created_at: file.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return fileFromRow(row);
}

/** Returns the file record, or undefined. */
export async function findFile(db: Db, id: number): Promise<StoredFile | undefined> {
  const row = await db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : fileFromRow(row);
}

/** Deletes file records; returns how many went. */
export async function deleteFiles(db: Db, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('files').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
