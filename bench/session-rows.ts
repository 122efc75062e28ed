/**
 * Student-session rows for the listing benchmark, generated here and written straight into the
 * database (SQLite through node:sqlite, PostgreSQL through pg) while no server runs: creating 100 000
 * sessions through the API would take far longer than the benchmark itself.
 *
 * The rows look like an exam's real history: created over several months in id order, statuses
 * spread over all seven values (most students still registered or mailed, a quarter finished),
 * checks, room fields and times filled according to the status, some archived, unique tokens, and
 * incidents on a fraction of sessions. A seeded generator makes every run load the same data, apart
 * from the random tokens.
 */
import crypto from 'node:crypto';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type pg from 'pg';

/** A value as generated; booleans become 0/1 for SQLite and stay booleans for PostgreSQL. */
export type Value = string | number | boolean | null;

/** Statuses in the contract's order, with the share of an exam's sessions in each. */
export const STATUS_SHARES: readonly (readonly [string, number])[] = [
  ['registered', 0.3],
  ['email_sent', 0.25],
  ['after_check_req', 0.05],
  ['in_setup', 0.04],
  ['exam_not_started', 0.06],
  ['exam_started', 0.05],
  ['exam_finished', 0.25],
];

/** Every column of student_sessions, in the order the generated values come. */
export const SESSION_COLUMNS = [
  'id',
  'exam_id',
  'name',
  'email',
  'attempt',
  'status',
  'token',
  'pin_code',
  'session_id',
  'student_id',
  'time_slot',
  'operating_system',
  'browser',
  'browser_version',
  'screenshare_check',
  'microphone_check',
  'speakers_check',
  'webcam_check',
  'mobile_check',
  'bandwidth_check',
  'bandwidth_speed',
  'dummy_exam_survey',
  'skip_requirements',
  'send_confirmation',
  'use_duration',
  'start_time',
  'end_time',
  'open_time',
  'reservation_time',
  'expires_at',
  'recording_started_at',
  'recording_ended_at',
  'entered_room',
  'exam_document_file_id',
  'exam_document_content_type',
  'exam_document_file_size',
  'exam_document_updated_at',
  'reviewed',
  'id_card_file_id',
  'id_card_file_name',
  'id_card_content_type',
  'id_card_file_size',
  'face_photo_file_id',
  'face_photo_file_name',
  'face_photo_content_type',
  'face_photo_file_size',
  'individual_info',
  'is_individual_info_html',
  'rtc_session_id',
  'rtc_session_ids',
  'in_setup',
  'in_check_requirements',
  'archived',
  'current_exam_mode',
  'transcoding_status',
  'priority',
  'is_email_sent',
  'proctor_id',
  'external_id',
  'end_reason',
  'lti_resource_id',
  'lms_user_id',
  'resource_link_id',
  'context_id',
  'created_at',
  'updated_at',
] as const;

export const INCIDENT_COLUMNS = [
  'id',
  'student_session_id',
  'comment',
  'offset_time',
  'kind',
  'created_at',
  'updated_at',
] as const;

type SessionColumn = (typeof SESSION_COLUMNS)[number];
type IncidentColumn = (typeof INCIDENT_COLUMNS)[number];

/** What to generate for one exam. */
export interface ExamFill {
  readonly examId: number;
  readonly sessions: number;
  /** The first session's id; the rest follow without gaps, in created_at order. */
  readonly firstId: number;
  /** created_at is spread evenly (with jitter) over [from, to), epoch ms. */
  readonly from: number;
  readonly to: number;
  /** Seed of the pseudo-random choices. */
  readonly seed: number;
}

/** One batch of rows, values in SESSION_COLUMNS / INCIDENT_COLUMNS order. */
export interface RowBatch {
  readonly sessions: Value[][];
  readonly incidents: Value[][];
}

/** Share of sessions with incidents: before the exam (a problem reported in the checks) and after. */
const INCIDENT_SHARE_BEFORE_EXAM = 0.08;
const INCIDENT_SHARE_DURING_EXAM = 0.25;
const ARCHIVED_SHARE_OF_FINISHED = 0.1;

const FIRST_NAMES = [
  'Ada',
  'Björn',
  'Chiara',
  'Dmitri',
  'Efua',
  'Farid',
  'Grace',
  'Hiroshi',
  'Ines',
  'Jonas',
];
const LAST_NAMES = ['Okafor', 'Lindqvist', 'Rossi', 'Ivanova', 'Mensah', 'Haddad', 'Hopper', 'Sato', 'Costa'];
const SYSTEMS = [
  ['Windows 11', 'Chrome', '131.0'],
  ['macOS 15', 'Safari', '18.2'],
  ['Ubuntu 24.04', 'Firefox', '133.0'],
  ['Windows 10', 'Edge', '131.0'],
] as const;
const INCIDENT_COMMENTS = [
  'Student left the camera view',
  'Second voice heard in the room',
  'Screen share interrupted',
  'Phone visible on the desk',
  'Reported a problem with the microphone check',
];
const CHECKS = 6;
const HOUR = 3_600_000;

/** mulberry32: a small, fast, seedable generator of floats in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pickOne<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pickOne from an empty list');
  return item;
}

function statusAt(random: () => number): number {
  let roll = random();
  for (let index = 0; index < STATUS_SHARES.length; index += 1) {
    roll -= STATUS_SHARES[index]?.[1] ?? 0;
    if (roll < 0) return index;
  }
  return STATUS_SHARES.length - 1;
}

function checkValue(stage: number, random: () => number): string {
  if (stage < 2) return 'not_started';
  const roll = random();
  return roll < 0.85 ? 'succeeded' : roll < 0.95 ? 'skipped' : 'failed';
}

/** One session's values. `stage` is the index of its status in STATUS_SHARES. */
function sessionValues(
  fill: ExamFill,
  id: number,
  index: number,
  createdAt: number,
  stage: number,
  random: () => number,
): Record<SessionColumn, Value> {
  const [system, browser, version] = pickOne(SYSTEMS, random);
  const inRoom = stage >= 3;
  const started = stage >= 5;
  const finished = stage === 6;
  const startTime = started ? createdAt + Math.floor((1 + random() * 48) * HOUR) : null;
  const endTime =
    finished && startTime !== null ? startTime + Math.floor((0.5 + random() * 1.5) * HOUR) : null;
  const checks = Array.from({ length: CHECKS }, () => checkValue(stage, random));
  const updatedAt = (endTime ?? startTime ?? createdAt) + Math.floor(random() * HOUR);
  return {
    id,
    exam_id: fill.examId,
    name: `${pickOne(FIRST_NAMES, random)} ${pickOne(LAST_NAMES, random)}`,
    email: `student${index}.exam${fill.examId}@students.example.org`,
    attempt: 0,
    status: STATUS_SHARES[stage]?.[0] ?? 'registered',
    token: crypto.randomBytes(16).toString('hex'),
    pin_code: 100_000 + Math.floor(random() * 900_000),
    session_id: inRoom ? `room-${id}` : null,
    student_id: inRoom ? `S${1_000_000 + index}` : null,
    time_slot: 0,
    operating_system: inRoom ? system : null,
    browser: inRoom ? browser : null,
    browser_version: inRoom ? version : null,
    screenshare_check: checks[0] ?? 'not_started',
    microphone_check: checks[1] ?? 'not_started',
    speakers_check: checks[2] ?? 'not_started',
    webcam_check: checks[3] ?? 'not_started',
    mobile_check: checks[4] ?? 'not_started',
    bandwidth_check: checks[5] ?? 'not_started',
    bandwidth_speed: stage >= 2 ? Math.round(random() * 2000) / 10 : null,
    dummy_exam_survey: null,
    skip_requirements: random() < 0.05,
    send_confirmation: false,
    use_duration: true,
    start_time: startTime,
    end_time: endTime,
    open_time: random() < 0.2 ? createdAt + 7 * 24 * HOUR : null,
    reservation_time: null,
    expires_at: null,
    recording_started_at: startTime,
    recording_ended_at: endTime,
    entered_room: started,
    exam_document_file_id: null,
    exam_document_content_type: null,
    exam_document_file_size: null,
    exam_document_updated_at: null,
    reviewed: 'not_reviewed',
    id_card_file_id: null,
    id_card_file_name: null,
    id_card_content_type: null,
    id_card_file_size: null,
    face_photo_file_id: null,
    face_photo_file_name: null,
    face_photo_content_type: null,
    face_photo_file_size: null,
    individual_info: random() < 0.1 ? 'Extra time: 15 minutes. Sits in room B.' : null,
    is_individual_info_html: false,
    rtc_session_id: started ? id : null,
    rtc_session_ids: started ? `["rtc-${id}"]` : '[]',
    in_setup: stage === 3,
    in_check_requirements: stage === 2,
    archived: finished && random() < ARCHIVED_SHARE_OF_FINISHED,
    current_exam_mode: null,
    transcoding_status: finished ? (random() < 0.8 ? 'completed' : 'queued') : 'not_sent_to_queue',
    priority: random() < 0.05 ? 'high' : null,
    is_email_sent: stage >= 1,
    proctor_id: null,
    external_id: random() < 0.3 ? `ext-${fill.examId}-${index}` : null,
    end_reason: finished ? 'finished' : null,
    lti_resource_id: null,
    lms_user_id: null,
    resource_link_id: null,
    context_id: null,
    created_at: createdAt,
    updated_at: updatedAt,
  };
}

/**
 * The rows of one exam, `batchSize` sessions (with their incidents) at a time. Incident ids are
 * taken from `incidentIds.next` onwards (the counter moves on, so several exams share it). Returns a
 * generator; the last batch may be shorter.
 */
export function* examRows(
  fill: ExamFill,
  batchSize: number,
  incidentIds: { next: number },
): Generator<RowBatch> {
  const random = seeded(fill.seed);
  const step = (fill.to - fill.from) / fill.sessions;
  let batch: RowBatch = { sessions: [], incidents: [] };
  for (let index = 0; index < fill.sessions; index += 1) {
    const id = fill.firstId + index;
    const createdAt = Math.floor(fill.from + (index + random()) * step);
    const stage = statusAt(random);
    const session = sessionValues(fill, id, index, createdAt, stage, random);
    batch.sessions.push(SESSION_COLUMNS.map((column) => session[column]));
    const share = stage >= 5 ? INCIDENT_SHARE_DURING_EXAM : INCIDENT_SHARE_BEFORE_EXAM;
    if (random() < share) {
      const howMany = 1 + Math.floor(random() * 3);
      for (let n = 0; n < howMany; n += 1) {
        const at = createdAt + Math.floor(random() * 24 * HOUR);
        const incident: Record<IncidentColumn, Value> = {
          id: incidentIds.next,
          student_session_id: id,
          comment: pickOne(INCIDENT_COMMENTS, random),
          offset_time: stage >= 5 ? Math.floor(random() * 3600) : null,
          kind: null,
          created_at: at,
          updated_at: at,
        };
        incidentIds.next += 1;
        batch.incidents.push(INCIDENT_COLUMNS.map((column) => incident[column]));
      }
    }
    if (batch.sessions.length === batchSize) {
      yield batch;
      batch = { sessions: [], incidents: [] };
    }
  }
  if (batch.sessions.length > 0) yield batch;
}

/** How many rows a load wrote. */
export interface Loaded {
  readonly sessions: number;
  readonly incidents: number;
}

function sqliteValue(value: Value): SQLInputValue {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/**
 * Writes the exams' rows into the SQLite file (no server may have it open for writing), one
 * transaction per batch. Returns the row counts.
 */
export function loadSqlite(file: string, fills: readonly ExamFill[], batchSize: number): Loaded {
  const db = new DatabaseSync(file, { timeout: 5000 });
  let sessions = 0;
  let incidents = 0;
  try {
    db.exec('PRAGMA foreign_keys = ON');
    const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ');
    const insertSession = db.prepare(
      `insert into student_sessions (${SESSION_COLUMNS.join(', ')}) values (${placeholders(SESSION_COLUMNS.length)})`,
    );
    const insertIncident = db.prepare(
      `insert into incidents (${INCIDENT_COLUMNS.join(', ')}) values (${placeholders(INCIDENT_COLUMNS.length)})`,
    );
    const incidentIds = { next: 1 };
    for (const fill of fills) {
      for (const batch of examRows(fill, batchSize, incidentIds)) {
        db.exec('BEGIN');
        for (const row of batch.sessions) insertSession.run(...row.map(sqliteValue));
        for (const row of batch.incidents) insertIncident.run(...row.map(sqliteValue));
        db.exec('COMMIT');
        sessions += batch.sessions.length;
        incidents += batch.incidents.length;
      }
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return { sessions, incidents };
}

/** Turns value rows into JSON objects keyed by column, for json_populate_recordset. */
function asRecords(columns: readonly string[], rows: readonly Value[][]): string {
  return JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((column, i) => [column, row[i]]))));
}

/**
 * Writes the exams' rows through `client` (connected, search_path on the benchmark's schema), one
 * transaction and one multi-row INSERT per table per batch, then moves the id sequences past the
 * rows. Statistics and vacuuming are left to the caller. Returns the row counts.
 */
export async function loadPostgres(
  client: pg.Client,
  fills: readonly ExamFill[],
  batchSize: number,
): Promise<Loaded> {
  let sessions = 0;
  let incidents = 0;
  const incidentIds = { next: 1 };
  for (const fill of fills) {
    for (const batch of examRows(fill, batchSize, incidentIds)) {
      await client.query('begin');
      await client.query(
        `insert into student_sessions (${SESSION_COLUMNS.join(', ')}) ` +
          `select ${SESSION_COLUMNS.join(', ')} from json_populate_recordset(null::student_sessions, $1)`,
        [asRecords(SESSION_COLUMNS, batch.sessions)],
      );
      if (batch.incidents.length > 0) {
        await client.query(
          `insert into incidents (${INCIDENT_COLUMNS.join(', ')}) ` +
            `select ${INCIDENT_COLUMNS.join(', ')} from json_populate_recordset(null::incidents, $1)`,
          [asRecords(INCIDENT_COLUMNS, batch.incidents)],
        );
      }
      await client.query('commit');
      sessions += batch.sessions.length;
      incidents += batch.incidents.length;
    }
  }
  for (const table of ['student_sessions', 'incidents']) {
    await client.query(
      `select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`,
    );
  }
  return { sessions, incidents };
}
