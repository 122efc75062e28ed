import { type Compilable, sql, type Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { isSqlite, type SqliteStatements, sqliteStatements } from '../../db/sqlite-dialect.ts';
import type { StudentSessionsTable } from '../../db/tables.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import { pauseEndedColumns } from '../live/live-controls.repository.ts';
import type { SessionStatus } from '../student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField } from '../student-sessions/student-session.ts';
import { MOBILE_FINISH_GRACE_MS } from '../mobile/mobile.ts';
import { MOBILE_RECORDING_KIND } from '../student-sessions/session-file.ts';
import type { CheckChanges, SessionUpload } from './room.ts';

// The room's queries run for every poll, event and chunk of every candidate, so those on these
// paths are compiled once (prepared) rather than built with the query builder on every call.

/**
 * Up to `limit` started sessions with an id above `afterId` (of exams not deleted, clock not held
 * still by a proctor) whose time may be up at `now`: the exam's end_time, or the start plus the
 * duration where both the session and the exam use it, has passed. A lower bound only: what the
 * one clock adds (deadline.ts: extra time, proctor pauses, rest breaks) only moves a deadline later,
 * so the room's own rule (deadlineOf) judges each one. A session on a rest break is not left out:
 * once the break's allowance has run out its deadline stops moving, and opening it settles the
 * break (room/breaks.ts) before judging the time. Returns their ids and room tokens in id order.
 */
export async function findTimeUpCandidates(
  db: Db,
  now: number,
  afterId: number,
  limit: number,
): Promise<{ id: number; token: string }[]> {
  return db
    .selectFrom('student_sessions as s')
    .innerJoin('exams as e', 'e.id', 's.exam_id')
    .select(['s.id', 's.token'])
    .where('s.status', '=', 'exam_started')
    .where('s.id', '>', afterId)
    .where('s.start_time', 'is not', null)
    .where('s.clock_paused_at', 'is', null)
    .where('e.status', '<>', 'deleted')
    .where((eb) =>
      eb.or([
        eb.and([eb('e.end_time', 'is not', null), eb('e.end_time', '<=', now)]),
        eb.and([
          eb('s.use_duration', '=', true),
          eb('e.use_duration', '=', true),
          eb('e.duration_minutes', 'is not', null),
          eb(sql<number>`s.start_time + e.duration_minutes * 60000`, '<=', now),
        ]),
      ]),
    )
    .orderBy('s.id')
    .limit(limit)
    .execute();
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
  /** The candidate's acceptance of the exam's terms, stored with the start it allowed. */
  readonly termsAcceptedAt?: number;
  readonly termsSha256?: string;
}

/**
 * Moves the session if it is still in status `from` (so of two racing requests only one moves it),
 * setting the move's fields; a move to `exam_finished` also ends a running pause of the clock.
 * Returns true when this call moved it.
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
  if (change.termsAcceptedAt !== undefined) set.terms_accepted_at = change.termsAcceptedAt;
  if (change.termsSha256 !== undefined) set.terms_sha256 = change.termsSha256;
  const finishing = change.to === 'exam_finished' ? pauseEndedColumns(change.now) : {};
  const result = await db
    .updateTable('student_sessions')
    .set({ ...set, ...finishing })
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

/** Stores the candidate's pick of a language (`chosen_language`). Returns nothing; a gone session is left alone. */
export async function updateChosenLanguage(db: Db, id: number, language: string, now: number): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({ chosen_language: language, updated_at: now })
    .where('id', '=', id)
    .execute();
}

const fileCounts = prepared([1] as [number], (db, sessionId) =>
  db
    .selectFrom('session_files')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('count')])
    .where('student_session_id', '=', sessionId)
    .groupBy('kind'),
);

/** How many files of each kind the session holds, by kind (a kind without files is absent). */
export async function sessionFileCounts(db: Db, sessionId: number): Promise<Map<string, number>> {
  const rows = await fileCounts(db, [sessionId]);
  return new Map(rows.map((row) => [row.kind, Number(row.count)]));
}

const highestSequence = prepared([1, 'kind'] as [number, string], (db, sessionId, kind) =>
  db
    .selectFrom('session_files')
    .select((eb) => eb.fn.max<number | null>('sequence').as('highest'))
    .where('student_session_id', '=', sessionId)
    .where('kind', '=', kind),
);

/** The next free sequence of the session's files of `kind`: one above the highest, 0 for none. */
export async function nextSequence(db: Db, sessionId: number, kind: string): Promise<number> {
  const [row] = await highestSequence(db, [sessionId, kind]);
  const highest = row?.highest;
  return highest === null || highest === undefined ? 0 : Number(highest) + 1;
}

const fileTypeAt = prepared([1, 'kind', 2] as [number, string, number], (db, sessionId, kind, sequence) =>
  db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select('files.content_type')
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', '=', kind)
    .where('session_files.sequence', '=', sequence),
);

/** The content type of the session's file of `kind` at `sequence`, or undefined when there is none. */
export async function sessionFileType(
  db: Db,
  sessionId: number,
  kind: string,
  sequence: number,
): Promise<string | undefined> {
  const [row] = await fileTypeAt(db, [sessionId, kind, sequence]);
  return row?.content_type;
}

const recordingStateRow = prepared(
  [1, 'kind', 2, 3, 'kind-again'] as [number, string, number, number, string],
  (db, sessionId, kind, firstSequence, sameSession, sameKind) =>
    db
      .selectFrom('session_files')
      .select((eb) => [
        eb
          .selectFrom('session_files as first')
          .innerJoin('files', 'files.id', 'first.file_id')
          .select('files.content_type')
          .where('first.student_session_id', '=', sessionId)
          .where('first.kind', '=', kind)
          .where('first.sequence', '=', firstSequence)
          .as('content_type'),
        eb.fn.max<number | null>('session_files.sequence').as('highest'),
      ])
      .where('session_files.student_session_id', '=', sameSession)
      .where('session_files.kind', '=', sameKind),
);

/**
 * Where the session's recording of `kind` stands, in one statement: its next free sequence (one
 * above the highest stored, 0 for none) and the content type of its chunk 0 (undefined when none).
 */
export async function recordingState(
  db: Db,
  sessionId: number,
  kind: string,
): Promise<{ next: number; contentType: string | undefined }> {
  const [row] = await recordingStateRow(db, [sessionId, kind, 0, sessionId, kind]);
  const highest = row?.highest;
  return {
    next: highest === null || highest === undefined ? 0 : Number(highest) + 1,
    contentType: row?.content_type ?? undefined,
  };
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

const incidentInsert = prepared(
  [1, 'kind', 'comment', 2, 3, 4] as [number, string, string, number | null, number, number],
  (db, sessionId, kind, comment, offsetTime, createdAt, updatedAt) =>
    db.insertInto('incidents').values({
      student_session_id: sessionId,
      kind,
      comment,
      offset_time: offsetTime,
      created_at: createdAt,
      updated_at: updatedAt,
    }),
);

/**
 * Records an incident the room reported, with its kind; `informational` ones (an event of a check
 * the student is exempt from) are kept for the record and never raised. Returns nothing.
 */
export async function insertRoomIncident(
  db: Db,
  sessionId: number,
  incident: { kind: string; comment: string; offsetTime: number | null; informational?: boolean },
  now: number,
): Promise<void> {
  if (incident.informational !== true) {
    await incidentInsert(db, [sessionId, incident.kind, incident.comment, incident.offsetTime, now, now]);
    return;
  }
  // Rare (exempt students only), so the plain query rather than a second prepared statement.
  await db
    .insertInto('incidents')
    .values({
      student_session_id: sessionId,
      kind: incident.kind,
      comment: incident.comment,
      offset_time: incident.offsetTime,
      informational: true,
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
  /**
   * Where the chunk is placed in time (its place's `created_at`): when the page made it, as far as
   * the server can tell (`now` less the age the page reports), so a chunk that waited on the device
   * is not placed at its late arrival. `now` judges the session's state and dates the file record.
   */
  readonly placedAt: number;
}

/**
 * Rows per group statement on PostgreSQL. Each row count has its own statement text, compiled once
 * (groupStatement), so this also bounds how many texts are kept; a larger group is written in
 * slices of this many.
 */
const ROWS_PER_STATEMENT = 64;

/**
 * The runner of a group statement for `rows` rows, compiled once per row count and database: the
 * chunk path writes a group every few milliseconds, and compiling it with the query builder for
 * each group cost more than running it.
 */
function groupStatement<Row>(
  runners: Map<number, (db: Db, values: unknown[]) => Promise<Row[]>>,
  rows: number,
  columns: number,
  build: (db: Db, values: readonly unknown[]) => Compilable<Row>,
): (db: Db, values: unknown[]) => Promise<Row[]> {
  let runner = runners.get(rows);
  if (runner === undefined) {
    // Distinct placeholder values, so prepared() can check that each lands in its own place.
    const placeholders: unknown[] = Array.from({ length: rows * columns }, (_, index) => `v${index}`);
    runner = prepared(placeholders, (db, ...values) => build(db, values));
    runners.set(rows, runner);
  }
  return runner;
}

/**
 * The SQL condition under which a chunk (`kind`, `sequence`, arriving at `now`) may join the recording
 * of its session `session`: while the session is `exam_started`; and a later chunk of a phone
 * recording that has begun also for MOBILE_FINISH_GRACE_MS after the session ended (the phone hears
 * of the end from its next request, so its last chunk, recorded before the end, arrives after it; a
 * recording begun after the end is not taken, since the end queued the finalisation without it). The
 * arguments are SQL expressions; the statuses, the kind and the grace are literals of this module.
 */
function recordingOpenSql(session: string, kind: string, sequence: string, now: string): string {
  const grace = `${kind} = '${MOBILE_RECORDING_KIND}' and ${sequence} > 0 and ${session}.status = 'exam_finished' and ${session}.end_time >= ${now} - ${MOBILE_FINISH_GRACE_MS}`;
  return `(${session}.status = 'exam_started' or (${grace}))`;
}

/** The columns of a chunk in the PostgreSQL group statement, in order, with their types. */
const CHUNK_COLUMNS = [
  ['session_id', 'integer'],
  ['kind', 'text'],
  ['storage_key', 'text'],
  ['original_name', 'text'],
  ['content_type', 'text'],
  ['size', 'bigint'],
  ['sha256', 'text'],
  ['sequence', 'integer'],
  ['now', 'bigint'],
  ['placed_at', 'bigint'],
] as const;

const chunkStatements = new Map<number, (db: Db, values: unknown[]) => Promise<{ storage_key: string }[]>>();

/**
 * Records a group of chunks on PostgreSQL in one statement, so one round trip and one commit: each
 * gets its place in its recording only if it is the next one (one above the highest stored, 0 for
 * none), its session is still `exam_started` and its exam not deleted, and its file record only
 * with its place. The file ids are drawn first, the places inserted (the unique index turning a
 * racing twin into no row), then the file records of the places that were inserted; the foreign
 * key is checked at the end of the statement, when both are in. No two of `rows` may belong to the
 * same recording (the statement cannot see its own rows). Returns the storage keys recorded.
 */
async function insertChunksOnPostgres(db: Db, rows: readonly ChunkRow[]): Promise<Set<string>> {
  const run = groupStatement(chunkStatements, rows.length, CHUNK_COLUMNS.length, (builder, values) => {
    // Every value cast: PostgreSQL reads untyped parameters in a VALUES list as text.
    const tuples = rows.map((_, index) => {
      const at = index * CHUNK_COLUMNS.length;
      const cells = CHUNK_COLUMNS.map(
        ([, type], column) => sql`cast(${values[at + column]} as ${sql.raw(type)})`,
      );
      return sql`(${sql.join(cells)})`;
    });
    const names = sql.raw(CHUNK_COLUMNS.map(([name]) => name).join(', '));
    // The statuses are literals, so the statement binds only the rows' values.
    const statement = sql<{ storage_key: string }>`
      with v (${names}) as (values ${sql.join(tuples)}),
      next as (
        select v.*, nextval(pg_get_serial_sequence('files', 'id')) as file_id
        from v
        inner join student_sessions s on s.id = v.session_id
        inner join exams e on e.id = s.exam_id
        where ${sql.raw(recordingOpenSql('s', 'v.kind', 'v.sequence', 'v.now'))} and e.status <> 'deleted'
          and coalesce((select max(f.sequence) from session_files f
            where f.student_session_id = v.session_id and f.kind = v.kind), -1) + 1 = v.sequence
      ),
      placed as (
        insert into session_files (student_session_id, kind, file_id, sequence, created_at)
        select session_id, kind, file_id, sequence, placed_at from next
        on conflict do nothing
        returning file_id
      )
      insert into files (id, storage_key, original_name, content_type, size, sha256, created_at)
      select next.file_id, next.storage_key, next.original_name, next.content_type, next.size,
        next.sha256, next.now
      from next inner join placed on placed.file_id = next.file_id
      returning storage_key`;
    return { compile: () => statement.compile(builder) };
  });
  const values: unknown[] = [];
  for (const row of rows) {
    values.push(
      row.sessionId,
      row.kind,
      row.storageKey,
      row.originalName,
      row.contentType,
      row.size,
      row.sha256,
      row.sequence,
      row.now,
      row.placedAt,
    );
  }
  const recorded = await run(db, values);
  return new Set(recorded.map((row) => row.storage_key));
}

/** What became of a chunk's rows: recorded (true), refused (false), or the database's failure. */
type ChunkOutcome = boolean | { readonly failure: unknown };

/**
 * Writes a group of chunks on PostgreSQL: in rounds holding at most one chunk of each recording
 * (a recording's second chunk must see its first), each round in statements of ROWS_PER_STATEMENT,
 * each statement atomic on its own. Returns, in the order given, each chunk's outcome: a statement
 * that fails fails its chunks and those not yet written, and leaves the earlier ones recorded.
 */
async function writeChunksOnPostgres(db: Db, rows: readonly ChunkRow[]): Promise<ChunkOutcome[]> {
  const outcomes: ChunkOutcome[] = rows.map(() => false);
  let waiting = rows.map((row, index) => ({ row, index }));
  while (waiting.length > 0) {
    const seen = new Set<string>();
    const now: typeof waiting = [];
    const later: typeof waiting = [];
    for (const chunk of waiting) {
      const recording = `${chunk.row.sessionId}:${chunk.row.kind}`;
      (seen.has(recording) ? later : now).push(chunk);
      seen.add(recording);
    }
    for (let offset = 0; offset < now.length; offset += ROWS_PER_STATEMENT) {
      const slice = now.slice(offset, offset + ROWS_PER_STATEMENT);
      try {
        const recorded = await insertChunksOnPostgres(
          db,
          slice.map((chunk) => chunk.row),
        );
        for (const chunk of slice) outcomes[chunk.index] = recorded.has(chunk.row.storageKey);
      } catch (failure) {
        for (const chunk of [...now.slice(offset), ...later]) outcomes[chunk.index] = { failure };
        return outcomes;
      }
    }
    waiting = later;
  }
  return outcomes;
}

/** A chunk's file record, for the SQLite path (writeChunksOnSqlite). */
const SQLITE_FILE_INSERT = `insert into files (storage_key, original_name, content_type, size, sha256, created_at)
  values (?, ?, ?, ?, ?, ?) returning id`;
/**
 * A chunk's place, on insertChunksOnPostgres' conditions: ?1 session, ?2 kind, ?3 file, ?4 sequence,
 * ?5 now, ?6 placed at.
 */
const SQLITE_PLACE_INSERT = `insert into session_files (student_session_id, kind, file_id, sequence, created_at)
  select s.id, ?2, ?3, ?4, ?6
  from student_sessions s inner join exams e on e.id = s.exam_id
  where s.id = ?1 and ${recordingOpenSql('s', '?2', '?4', '?5')} and e.status <> 'deleted'
    and coalesce((select max(f.sequence) from session_files f
      where f.student_session_id = ?1 and f.kind = ?2), -1) + 1 = ?4
  on conflict do nothing
  returning file_id`;
const SQLITE_FILE_DELETE = 'delete from files where id = ?';

/**
 * Writes a group of chunks on SQLite, in one transaction of statements prepared once and run
 * synchronously, row after row (so a recording's second chunk in the group sees its first): the
 * same rows and conditions as on PostgreSQL, without the query builder's cost per statement. Must
 * run while holding the connection (SqliteStatements). Returns, in the order given, whether each
 * was recorded; throws what SQLite throws, having rolled back.
 */
function writeChunksOnSqlite(statements: SqliteStatements, rows: readonly ChunkRow[]): boolean[] {
  const insertFile = statements.statement(SQLITE_FILE_INSERT);
  const insertPlace = statements.statement(SQLITE_PLACE_INSERT);
  statements.exec('begin');
  try {
    const recorded = rows.map((row) => {
      const file = insertFile.get(
        row.storageKey,
        row.originalName,
        row.contentType,
        row.size,
        row.sha256,
        row.now,
      );
      const fileId = Number(file?.id);
      if (insertPlace.get(row.sessionId, row.kind, fileId, row.sequence, row.now, row.placedAt) !== undefined)
        return true;
      statements.statement(SQLITE_FILE_DELETE).run(fileId);
      return false;
    });
    statements.exec('commit');
    return recorded;
  } catch (error) {
    try {
      statements.exec('rollback');
    } catch {
      // no transaction left to roll back (SQLite rolled it back itself)
    }
    throw error;
  }
}

/**
 * The recording chunks' rows, written in groups. A chunk is stored before its rows are written, so
 * each request's database work is only its two rows; the requests that arrive while a group is
 * written are written together in the next (as the nonce store groups nonces). Each caller waits
 * for the commit that holds its own rows, so an acknowledged chunk is durable.
 */
export interface ChunkLedger {
  /**
   * Writes the chunk's file record and its place in the recording (insertChunksOnPostgres' rules).
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
 * How long the first chunk of a group waits for others before the group is written. A commit
 * costs more than a row (and on PostgreSQL a round trip), and at a few hundred chunks a second a
 * group gathered within one turn of the event loop held one or two chunks; this short wait makes
 * groups of several, for a few milliseconds on each acknowledgement.
 */
const GROUP_WINDOW_MS = 8;

/** The ledger of one process over `db`. Returns it; building it touches nothing. */
export function createChunkLedger(db: Db): ChunkLedger {
  let pending: PendingChunk[] = [];
  let writing = false;

  async function write(rows: readonly ChunkRow[]): Promise<ChunkOutcome[]> {
    if (!isSqlite(db)) return writeChunksOnPostgres(db, rows);
    // On SQLite the statements run directly once Kysely hands over the connection (connected by
    // then), so they never land inside a transaction of another caller.
    try {
      return await db.connection().execute((connection) => {
        const statements = sqliteStatements(connection);
        if (statements === undefined) throw new Error('no SQLite connection');
        return Promise.resolve(writeChunksOnSqlite(statements, rows));
      });
    } catch (failure) {
      return rows.map(() => ({ failure }));
    }
  }

  /** Writes what is pending, then whatever arrived meanwhile, one group at a time. */
  async function drain(): Promise<void> {
    writing = true;
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      let outcomes: ChunkOutcome[];
      try {
        outcomes = await write(batch.map((item) => item.row));
      } catch (failure) {
        outcomes = batch.map(() => ({ failure }));
      }
      batch.forEach((item, index) => {
        const outcome = outcomes[index] ?? false;
        if (typeof outcome === 'boolean') item.resolve(outcome);
        else item.reject(outcome.failure);
      });
    }
    writing = false;
  }

  return {
    record(row) {
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ row, resolve, reject });
        // The first chunk of a group waits a moment (GROUP_WINDOW_MS), so the others arriving
        // meanwhile share its commit; while a group is written, arrivals wait for the next anyway.
        if (!writing && pending.length === 1) setTimeout(() => void drain(), GROUP_WINDOW_MS);
      });
    },
  };
}
