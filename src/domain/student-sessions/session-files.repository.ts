import type { Db } from '../../db/database.ts';
import { SESSION_FILE_KINDS, type SessionFile, type SessionFileKind } from './session-file.ts';

/**
 * The session's files of `kind` (every kind of SESSION_FILE_KINDS when undefined) with their file
 * records. Returns them ordered by kind in SESSION_FILE_KINDS order, then by sequence.
 */
export async function listSessionFiles(
  db: Db,
  sessionId: number,
  kind: SessionFileKind | undefined,
): Promise<SessionFile[]> {
  const kinds: readonly SessionFileKind[] = kind === undefined ? SESSION_FILE_KINDS : [kind];
  const rows = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select([
      'session_files.kind',
      'session_files.sequence',
      'session_files.created_at',
      'files.id as file_id',
      'files.original_name',
      'files.content_type',
      'files.size',
    ])
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', 'in', kinds)
    .orderBy('session_files.sequence')
    .execute();
  const files = rows.flatMap((row): SessionFile[] => {
    const known = kinds.find((candidate) => candidate === row.kind);
    if (known === undefined) return [];
    return [
      {
        kind: known,
        sequence: Number(row.sequence),
        fileId: row.file_id,
        fileName: row.original_name,
        contentType: row.content_type,
        fileSize: Number(row.size),
        createdAt: Number(row.created_at),
      },
    ];
  });
  // The kinds' order is the listing's, not the alphabet's; sort is stable, so sequences stay in order.
  return files.sort((a, b) => SESSION_FILE_KINDS.indexOf(a.kind) - SESSION_FILE_KINDS.indexOf(b.kind));
}
