import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { RecordingsTable } from '../../db/tables.ts';
import { RECORDING_SOURCES, type RecordingSource } from '../room/room.ts';
import type { TranscodingStatus } from '../student-sessions/status.ts';
import type { ChunkRef } from './assemble.ts';
import {
  type Gap,
  gapComment,
  gapCommentPrefix,
  RECORDING_GAP_INCIDENT,
  RECORDING_STATUSES,
  type Recording,
  type RecordingStatus,
} from './recording.ts';

function readGaps(text: string): Gap[] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((item: unknown) => {
      if (typeof item !== 'object' || item === null) return [];
      const { start, end } = item as Record<string, unknown>;
      return typeof start === 'number' && typeof end === 'number' ? [{ start, end }] : [];
    });
  } catch {
    return [];
  }
}

function recordingFromRow(row: Selectable<RecordingsTable>): Recording {
  const status = RECORDING_STATUSES.find((known) => known === row.status);
  if (status === undefined) throw new Error(`recording ${row.id} has an unknown status`);
  const source = RECORDING_SOURCES.find((known) => known === row.source);
  if (source === undefined) throw new Error(`recording ${row.id} has an unknown source`);
  return {
    id: row.id,
    studentSessionId: row.student_session_id,
    source,
    status,
    startedAt: row.started_at === null ? null : Number(row.started_at),
    durationSeconds: row.duration_seconds === null ? null : Number(row.duration_seconds),
    gaps: readGaps(row.gaps),
    fileId: row.file_id,
    size: row.size === null ? null : Number(row.size),
    chunks: Number(row.chunks),
    chunksDamaged: Number(row.chunks_damaged),
    error: row.error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * The session's recordings in the order of RECORDING_SOURCES: webcam, screen, then the phone.
 * Throws for a row whose source or status this code does not know.
 */
export async function listRecordings(db: Db, sessionId: number): Promise<Recording[]> {
  const rows = await db
    .selectFrom('recordings')
    .selectAll()
    .where('student_session_id', '=', sessionId)
    .execute();
  return rows
    .map(recordingFromRow)
    .sort((a, b) => RECORDING_SOURCES.indexOf(a.source) - RECORDING_SOURCES.indexOf(b.source));
}

/** The session's recording of `source`, or undefined. */
export async function findRecording(
  db: Db,
  sessionId: number,
  source: RecordingSource,
): Promise<Recording | undefined> {
  const row = await db
    .selectFrom('recordings')
    .selectAll()
    .where('student_session_id', '=', sessionId)
    .where('source', '=', source)
    .executeTakeFirst();
  return row === undefined ? undefined : recordingFromRow(row);
}

/** What a write of a recording sets (unset fields stay as they are; a new row gets defaults). */
export interface RecordingChange {
  readonly status: RecordingStatus;
  readonly startedAt?: number | null;
  readonly durationSeconds?: number | null;
  readonly gaps?: readonly Gap[];
  readonly fileId?: number | null;
  readonly storageKey?: string | null;
  readonly size?: number | null;
  readonly chunks?: number;
  readonly chunksDamaged?: number;
  readonly error?: string | null;
}

/** Creates or updates the session's recording of `source` (one per session and source). Returns nothing. */
export async function saveRecording(
  db: Db,
  sessionId: number,
  source: RecordingSource,
  change: RecordingChange,
  now: number,
): Promise<void> {
  const set = {
    status: change.status,
    updated_at: now,
    ...(change.startedAt === undefined ? {} : { started_at: change.startedAt }),
    ...(change.durationSeconds === undefined ? {} : { duration_seconds: change.durationSeconds }),
    ...(change.gaps === undefined ? {} : { gaps: JSON.stringify(change.gaps) }),
    ...(change.fileId === undefined ? {} : { file_id: change.fileId }),
    ...(change.storageKey === undefined ? {} : { storage_key: change.storageKey }),
    ...(change.size === undefined ? {} : { size: change.size }),
    ...(change.chunks === undefined ? {} : { chunks: change.chunks }),
    ...(change.chunksDamaged === undefined ? {} : { chunks_damaged: change.chunksDamaged }),
    ...(change.error === undefined ? {} : { error: change.error }),
  };
  await db
    .insertInto('recordings')
    .values({ student_session_id: sessionId, source, created_at: now, ...set })
    .onConflict((conflict) => conflict.columns(['student_session_id', 'source']).doUpdateSet(set))
    .execute();
}

/** Sets the session's `transcoding_status`. Returns nothing. */
export async function setTranscodingStatus(
  db: Db,
  sessionId: number,
  status: TranscodingStatus,
  now: number,
): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({ transcoding_status: status, updated_at: now })
    .where('id', '=', sessionId)
    .execute();
}

/** What the job needs of a session: its recording times, or undefined when it is gone. */
export async function findRecordingTimes(
  db: Db,
  sessionId: number,
): Promise<{ startedAt: number | null; endedAt: number | null } | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['recording_started_at', 'start_time', 'recording_ended_at', 'end_time'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const startedAt = row.recording_started_at ?? row.start_time;
  const endedAt = row.recording_ended_at ?? row.end_time;
  return {
    startedAt: startedAt === null ? null : Number(startedAt),
    endedAt: endedAt === null ? null : Number(endedAt),
  };
}

/** A stored chunk of a recording, with the id of its file record. */
export interface StoredChunk extends ChunkRef {
  readonly fileId: number;
}

/**
 * The session's chunks of `kind` (`recording`, `screen_recording`, `mobile_recording`), in sequence
 * order.
 */
export async function recordingChunks(db: Db, sessionId: number, kind: string): Promise<StoredChunk[]> {
  const rows = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select([
      'session_files.sequence',
      'session_files.file_id',
      'session_files.created_at',
      'files.storage_key',
      'files.size',
    ])
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', '=', kind)
    .orderBy('session_files.sequence')
    .execute();
  return rows.map((row) => ({
    sequence: row.sequence,
    fileId: row.file_id,
    storageKey: row.storage_key,
    size: Number(row.size),
    createdAt: Number(row.created_at),
  }));
}

/** How many recording chunks (of any stream) the session holds. */
export async function countRecordingChunks(
  db: Db,
  sessionId: number,
  kinds: readonly string[],
): Promise<number> {
  const row = await db
    .selectFrom('session_files')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('student_session_id', '=', sessionId)
    .where('kind', 'in', kinds)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Forgets the session's chunk rows of `kind` (their files are removed by the caller). Returns nothing. */
export async function deleteChunkRows(db: Db, sessionId: number, kind: string): Promise<void> {
  await db
    .deleteFrom('session_files')
    .where('student_session_id', '=', sessionId)
    .where('kind', '=', kind)
    .execute();
}

/**
 * Replaces the session's recording-gap incidents of `source` with one per gap, so a retried job
 * leaves the same incidents as a single run. Returns nothing.
 */
export async function replaceGapIncidents(
  db: Db,
  sessionId: number,
  source: RecordingSource,
  gaps: readonly Gap[],
  now: number,
): Promise<void> {
  await db
    .deleteFrom('incidents')
    .where('student_session_id', '=', sessionId)
    .where('kind', '=', RECORDING_GAP_INCIDENT)
    .where('comment', 'like', `${gapCommentPrefix(source)}%`)
    .execute();
  if (gaps.length === 0) return;
  await db
    .insertInto('incidents')
    .values(
      gaps.map((gap) => ({
        student_session_id: sessionId,
        kind: RECORDING_GAP_INCIDENT,
        comment: gapComment(source, gap),
        offset_time: Math.floor(gap.start),
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
}
