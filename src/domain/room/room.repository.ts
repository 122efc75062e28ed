import { type Updateable, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { StudentSessionsTable } from '../../db/tables.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import type { SessionStatus } from '../student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField } from '../student-sessions/student-session.ts';
import type { CheckChanges, SessionUpload } from './room.ts';

/** The id of the session a room token names, or undefined. */
export async function findSessionIdByToken(db: Db, token: string): Promise<number | undefined> {
  // No token holds a NUL, and PostgreSQL text cannot hold one: asked as it is, the query fails.
  if (token.includes('\u0000')) return undefined;
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('token', '=', token)
    .executeTakeFirst();
  return row?.id;
}

/** A status move of the room, with the fields that go with it (unset fields are left as they are). */
export interface RoomMove {
  readonly from: SessionStatus;
  readonly to: SessionStatus;
  readonly now: number;
  readonly enteredRoom?: boolean;
  readonly inSetup?: boolean;
  readonly startTime?: number;
  readonly recordingStartedAt?: number;
  readonly endTime?: number;
  readonly recordingEndedAt?: number;
  readonly endReason?: string;
}

/**
 * Moves the session if it is still in status `from` (so of two racing requests only one moves it),
 * setting the move's fields. Returns true when this call moved it.
 */
export async function moveRoomSession(db: Db, id: number, change: RoomMove): Promise<boolean> {
  const set: Updateable<StudentSessionsTable> = { status: change.to, updated_at: change.now };
  if (change.enteredRoom !== undefined) set.entered_room = change.enteredRoom;
  if (change.inSetup !== undefined) set.in_setup = change.inSetup;
  if (change.startTime !== undefined) set.start_time = change.startTime;
  if (change.recordingStartedAt !== undefined) set.recording_started_at = change.recordingStartedAt;
  if (change.endTime !== undefined) set.end_time = change.endTime;
  if (change.recordingEndedAt !== undefined) set.recording_ended_at = change.recordingEndedAt;
  if (change.endReason !== undefined) set.end_reason = change.endReason;
  const result = await db
    .updateTable('student_sessions')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', change.from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes the checks and client details a `PUT checks` carries. Returns nothing; a gone session is left alone. */
export async function updateRoomChecks(
  db: Db,
  id: number,
  changes: CheckChanges,
  now: number,
): Promise<void> {
  const set: Updateable<StudentSessionsTable> = { updated_at: now };
  for (const [field, value] of Object.entries(changes.checks) as [CheckField, string][]) {
    set[CHECK_FIELDS[field]] = value;
  }
  if (changes.bandwidthSpeed !== undefined) set.bandwidth_speed = changes.bandwidthSpeed;
  if (changes.operatingSystem !== undefined) set.operating_system = changes.operatingSystem;
  if (changes.browser !== undefined) set.browser = changes.browser;
  if (changes.browserVersion !== undefined) set.browser_version = changes.browserVersion;
  await db.updateTable('student_sessions').set(set).where('id', '=', id).execute();
}

/** How many files of each kind the session holds, by kind (a kind without files is absent). */
export async function sessionFileCounts(db: Db, sessionId: number): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('session_files')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('count')])
    .where('student_session_id', '=', sessionId)
    .groupBy('kind')
    .execute();
  return new Map(rows.map((row) => [row.kind, Number(row.count)]));
}

/** The next free sequence of the session's files of `kind`: one above the highest, 0 for none. */
export async function nextSequence(db: Db, sessionId: number, kind: string): Promise<number> {
  const row = await db
    .selectFrom('session_files')
    .select((eb) => eb.fn.max<number | null>('sequence').as('highest'))
    .where('student_session_id', '=', sessionId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  const highest = row?.highest;
  return highest === null || highest === undefined ? 0 : Number(highest) + 1;
}

/** The content type of the session's file of `kind` at `sequence`, or undefined when there is none. */
export async function sessionFileType(
  db: Db,
  sessionId: number,
  kind: string,
  sequence: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select('files.content_type')
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', '=', kind)
    .where('session_files.sequence', '=', sequence)
    .executeTakeFirst();
  return row?.content_type;
}

/**
 * Records a stored file as the session's file of `kind` at `sequence`. Returns false, recording
 * nothing, when that sequence is already taken (the unique index decides, even under concurrency).
 */
export async function insertSessionFile(
  db: Db,
  file: { sessionId: number; kind: string; fileId: number; sequence: number; now: number },
): Promise<boolean> {
  try {
    await db
      .insertInto('session_files')
      .values({
        student_session_id: file.sessionId,
        kind: file.kind,
        file_id: file.fileId,
        sequence: file.sequence,
        created_at: file.now,
      })
      .execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** The session's file of `kind` at `sequence` as the room answers it, or undefined. */
export async function findSessionUpload(
  db: Db,
  sessionId: number,
  kind: string,
  sequence: number,
): Promise<SessionUpload | undefined> {
  const row = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select([
      'files.original_name',
      'files.size',
      'files.content_type',
      'session_files.sequence',
      'session_files.created_at',
    ])
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', '=', kind)
    .where('session_files.sequence', '=', sequence)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    fileName: row.original_name,
    size: Number(row.size),
    contentType: row.content_type,
    sequence: row.sequence,
    createdAt: Number(row.created_at),
  };
}

/** Records an incident the room reported, with its kind. Returns nothing. */
export async function insertRoomIncident(
  db: Db,
  sessionId: number,
  incident: { kind: string; comment: string; offsetTime: number | null },
  now: number,
): Promise<void> {
  await db
    .insertInto('incidents')
    .values({
      student_session_id: sessionId,
      kind: incident.kind,
      comment: incident.comment,
      offset_time: incident.offsetTime,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** The attachments of a document, oldest first, with the id of the file each holds. */
export async function attachmentsOfDocument(
  db: Db,
  documentId: number,
): Promise<
  { placeholder: string; fileName: string; contentType: string; fileSize: number; fileId: number }[]
> {
  const rows = await db
    .selectFrom('attachments')
    .select(['placeholder', 'file_name', 'content_type', 'file_size', 'file_id'])
    .where('document_id', '=', documentId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    placeholder: row.placeholder,
    fileName: row.file_name,
    contentType: row.content_type,
    fileSize: Number(row.file_size),
    fileId: row.file_id,
  }));
}

/** A stored recording chunk waiting for its rows: the file record and its place in the recording. */
export interface ChunkRow {
  readonly sessionId: number;
  readonly kind: string;
  readonly sequence: number;
  readonly storageKey: string;
  readonly originalName: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
  readonly now: number;
}

/** Rows per statement: well inside both databases' limits on bound values (six or five a row). */
const ROWS_PER_STATEMENT = 400;

/** Writes the chunks' file records in one statement. Returns their ids, in the order given. */
async function insertChunkFiles(trx: Db, rows: readonly ChunkRow[]): Promise<number[]> {
  const inserted = await trx
    .insertInto('files')
    .values(
      rows.map((row) => ({
        storage_key: row.storageKey,
        original_name: row.originalName,
        content_type: row.contentType,
        size: row.size,
        sha256: row.sha256,
        created_at: row.now,
      })),
    )
    .returning(['id', 'storage_key'])
    .execute();
  // Matched by storage key (unique), since neither database promises the order of RETURNING.
  const ids = new Map(inserted.map((file) => [file.storage_key, file.id]));
  return rows.map((row) => {
    const id = ids.get(row.storageKey);
    if (id === undefined) throw new Error(`no file record was written for ${row.storageKey}`);
    return id;
  });
}

/**
 * Records the chunks' places in one statement, each only if it is the next of its recording (one
 * above the highest stored, 0 for none), its session is still `exam_started` and its exam not
 * deleted; the unique index turns a racing twin into no row rather than an error. No two of
 * `chunks` may belong to the same recording (the statement cannot see its own rows). Returns the
 * file ids of the chunks recorded.
 */
async function insertNextChunks(
  trx: Db,
  chunks: readonly { readonly row: ChunkRow; readonly fileId: number }[],
): Promise<Set<number>> {
  // Every value cast: PostgreSQL reads untyped parameters in a VALUES list as text.
  const values = chunks.map(
    ({ row, fileId }) =>
      sql`(cast(${row.sessionId} as integer), cast(${row.kind} as text), cast(${fileId} as integer), cast(${row.sequence} as integer), cast(${row.now} as bigint))`,
  );
  const result = await sql<{ file_id: number }>`
    insert into session_files (student_session_id, kind, file_id, sequence, created_at)
    select s.id, v.column2, v.column3, v.column4, v.column5
    from (values ${sql.join(values)}) as v
    inner join student_sessions s on s.id = v.column1
    inner join exams e on e.id = s.exam_id
    where s.status = ${'exam_started'} and e.status <> ${'deleted'}
      and coalesce((select max(f.sequence) from session_files f
        where f.student_session_id = v.column1 and f.kind = v.column2), -1) + 1 = v.column4
    on conflict do nothing
    returning file_id`.execute(trx);
  return new Set(result.rows.map((row) => Number(row.file_id)));
}

/**
 * Writes a group of chunks: their file records in one statement, their places in as few as can be
 * (one, unless a recording has two chunks in the group), and removes the records of those refused.
 * Returns, in the order given, whether each was recorded.
 */
async function writeChunks(trx: Db, rows: readonly ChunkRow[]): Promise<boolean[]> {
  const recorded: boolean[] = [];
  for (let offset = 0; offset < rows.length; offset += ROWS_PER_STATEMENT) {
    const slice = rows.slice(offset, offset + ROWS_PER_STATEMENT);
    const ids = await insertChunkFiles(trx, slice);
    let waiting = slice.map((row, index) => ({ row, fileId: ids[index] ?? 0 }));
    const placed = new Set<number>();
    while (waiting.length > 0) {
      const seen = new Set<string>();
      const now: typeof waiting = [];
      const later: typeof waiting = [];
      for (const chunk of waiting) {
        const recording = `${chunk.row.sessionId}:${chunk.row.kind}`;
        (seen.has(recording) ? later : now).push(chunk);
        seen.add(recording);
      }
      for (const id of await insertNextChunks(trx, now)) placed.add(id);
      waiting = later;
    }
    const refused = ids.filter((id) => !placed.has(id));
    if (refused.length > 0) await trx.deleteFrom('files').where('id', 'in', refused).execute();
    recorded.push(...ids.map((id) => placed.has(id)));
  }
  return recorded;
}

/**
 * The recording chunks' rows, written in groups. A chunk is stored before its rows are written, so
 * each request's database work is only its two rows; the requests that arrive while a commit runs
 * are written together in the next transaction (as the nonce store groups nonces). Each caller
 * waits for the commit that holds its own rows, so an acknowledged chunk is durable.
 */
export interface ChunkLedger {
  /**
   * Writes the chunk's file record and its place in the recording (insertNextChunk's rules).
   * Resolves true when recorded, false when refused (nothing of it is left in the database);
   * rejects when the database fails.
   */
  record(row: ChunkRow): Promise<boolean>;
}

interface PendingChunk {
  readonly row: ChunkRow;
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * How long the first chunk of a group waits for others before the group is written. A transaction
 * costs far more than a row (Kysely compiling two statements, begin, commit), and at a few hundred
 * chunks a second a group gathered within one turn of the event loop held one or two chunks; this
 * short wait makes groups of several, for a few milliseconds on each acknowledgement.
 */
const GROUP_WINDOW_MS = 8;

/** The ledger of one process over `db`. Returns it; building it touches nothing. */
export function createChunkLedger(db: Db): ChunkLedger {
  let pending: PendingChunk[] = [];
  let writing = false;

  function write(batch: readonly PendingChunk[]): Promise<boolean[]> {
    return db.transaction().execute((trx) =>
      writeChunks(
        trx,
        batch.map((item) => item.row),
      ),
    );
  }

  /** Writes what is pending, then whatever arrived meanwhile, one transaction at a time. */
  async function drain(): Promise<void> {
    writing = true;
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      try {
        const recorded = await write(batch);
        batch.forEach((item, index) => item.resolve(recorded[index] === true));
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
    }
    writing = false;
  }

  return {
    record(row) {
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ row, resolve, reject });
        // The first chunk of a group waits a moment (GROUP_WINDOW_MS), so the others arriving
        // meanwhile share its commit; while a commit runs, arrivals wait for the next one anyway.
        if (!writing && pending.length === 1) setTimeout(() => void drain(), GROUP_WINDOW_MS);
      });
    },
  };
}
