/**
 * The exam documents zip: an export's record, the `zip_job_status` the API reports, and how the
 * files students handed in are named inside the archive. Pure: no I/O here.
 */
import type { Job } from '../ports/jobs.ts';
import { Invalid } from '../errors.ts';
import { param, type Params } from '../input.ts';

/** The job kind that builds an export (src/jobs/exam-zip.job.ts). */
export const EXAM_ZIP_JOB = 'exam_zip';

/** The 404 message of a download before a readable archive exists (contract §7). */
export const NO_ZIP = "Couldn't find the exam documents zip";

/** The name of an exam's archive: its stored file's name and the download's file name. */
export function zipFileName(examId: number): string {
  return `exam-${examId}-documents.zip`;
}

/** The queue's dedupe key of an exam's zip job: one queued or running job per exam. */
export function zipDedupeKey(examId: number): string {
  return `exam:${examId}`;
}

/** What an `exam_zip_exports` row says about its own attempt. */
export const EXPORT_STATUSES = ['queued', 'running', 'success', 'failure'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** Every value of `zip_job_status` (api.md, "Exams documents zip job"). */
export const ZIP_JOB_STATUSES = [
  'never_run',
  'queued',
  'running',
  'success',
  'failure',
  'not_found',
] as const;
export type ZipJobStatus = (typeof ZIP_JOB_STATUSES)[number];

/** One request for an exam's archive (a row of `exam_zip_exports`). */
export interface ExamExport {
  readonly id: number;
  readonly examId: number;
  /** What the last attempt wrote: queued until one starts, then running, success or failure. */
  readonly status: ExportStatus;
  /** The job building it; null only if that job's row was deleted. */
  readonly jobId: number | null;
  /** The archive once built; null before, and after a newer export superseded it. */
  readonly fileId: number | null;
  /** Why the last attempt failed (status-page safe). */
  readonly error: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The `zip_job_status` of an exam from its latest export, that export's job, and whether the
 * archive can still be read. The row records what the last attempt did; the job says whether more
 * attempts follow, so:
 * - no export: `never_run`;
 * - the export succeeded: `success` while its archive is readable, else `not_found` (purged);
 * - its job is queued (first run, or waiting out a retry's backoff) or running: `queued`/`running`;
 * - its job has failed for good (also when the last attempt's worker vanished without writing the
 *   row): `failure`;
 * - otherwise what the row says, where a row still `queued` or `running` without a live job is a
 *   `failure` (nothing will ever finish it).
 * Returns the status.
 */
export function zipJobStatus(
  latest: ExamExport | undefined,
  job: Pick<Job, 'status'> | undefined,
  archiveReadable: boolean,
): ZipJobStatus {
  if (latest === undefined) return 'never_run';
  if (latest.status === 'success') return archiveReadable ? 'success' : 'not_found';
  if (job?.status === 'queued') return 'queued';
  if (job?.status === 'running') return 'running';
  return 'failure';
}

// ---- Naming inside the archive ----

/** Longest file name kept, in UTF-8 bytes (most file systems allow 255; room for " (99)"). */
const MAX_NAME_BYTES = 200;

/** Device names Windows refuses as file names, whatever the extension. */
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;

/**
 * The folder of a session: `<session id>-<email>`, the email with anything but letters, digits and
 * `._@+-` replaced by `_`, so no email can climb out of the folder or break an unzipper. Returns it
 * without the trailing slash.
 */
export function sessionFolder(sessionId: number, email: string): string {
  const safe = email.normalize('NFC').replace(/[^A-Za-z0-9._@+-]/g, '_');
  return `${sessionId}-${truncateUtf8(safe, MAX_NAME_BYTES)}`;
}

/**
 * A client's file name made safe as one path segment on every common system: the last segment of
 * any path it carries, control characters and `<>:"/\|?*` replaced by `_`, leading and trailing
 * dots and spaces dropped, Windows device names prefixed with `_`, at most MAX_NAME_BYTES (the
 * extension kept). Returns `fallback` when nothing is left.
 */
export function safeFileName(name: string, fallback: string): string {
  const last = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  let cleaned = last.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').replace(/^[\s.]+|[\s.]+$/g, '');
  if (cleaned === '') return fallback;
  if (WINDOWS_RESERVED.test(cleaned)) cleaned = `_${cleaned}`;
  return truncateName(cleaned);
}

/** Splits `name.ext` into its stem and extension (`.ext`, or '' when there is none). */
function splitExtension(name: string): { stem: string; extension: string } {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || name.length - dot > 16) return { stem: name, extension: '' };
  return { stem: name.slice(0, dot), extension: name.slice(dot) };
}

function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let result = '';
  for (const character of text) {
    if (Buffer.byteLength(result + character) > maxBytes) break;
    result += character;
  }
  return result;
}

function truncateName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const { stem, extension } = splitExtension(name);
  return truncateUtf8(stem, MAX_NAME_BYTES - Buffer.byteLength(extension)) + extension;
}

/**
 * Hands out file names within one folder without repeats: a name already taken (compared without
 * regard to case, as Windows and macOS do) becomes `name (2).ext`, `name (3).ext`, ... Returns the
 * function that reserves and returns the next free form of a name.
 */
export function uniqueNames(): (name: string) => string {
  const taken = new Set<string>();
  return (name) => {
    const { stem, extension } = splitExtension(name);
    let candidate = name;
    for (let copy = 2; taken.has(candidate.toLowerCase()); copy += 1) {
      candidate = `${stem} (${copy})${extension}`;
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  };
}

// ---- What goes into the archive ----

/**
 * Which of a session's files an archive holds: always its exam document and handed-in uploads; on
 * request (`include`) its ID card and face photo, its finalised recordings and its report.
 */
export type ArchivedKind = 'exam_document' | 'upload' | 'id_card' | 'face_photo' | 'recording' | 'report';

/** What `generate_exam_documents_zip` may add to the archive with `include` (docs/zip-exports.md). */
export const EXPORT_INCLUDES = ['recordings', 'photos', 'reports'] as const;
export type ExportInclude = (typeof EXPORT_INCLUDES)[number];

function knownInclude(value: unknown): ExportInclude | undefined {
  return EXPORT_INCLUDES.find((known) => known === (typeof value === 'string' ? value.trim() : value));
}

/**
 * Reads `include`: names from EXPORT_INCLUDES separated by commas (`photos,reports`), or a JSON array
 * of them. Absent, null or empty: nothing extra. Returns them without repeats, in EXPORT_INCLUDES
 * order; throws Invalid (`'include':['is not included in the list']`) for any other value.
 */
export function readExportIncludes(params: Params): ExportInclude[] {
  const value = param(params, 'include');
  if (value === undefined || value === null || value === '') return [];
  const names: unknown[] =
    typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [value];
  const found = new Set<ExportInclude>();
  for (const name of names) {
    const include = knownInclude(name);
    if (include === undefined) throw new Invalid('include', 'is not included in the list');
    found.add(include);
  }
  return EXPORT_INCLUDES.filter((include) => found.has(include));
}

/**
 * Reads the `include` of an `exam_zip` job's payload (written by readExportIncludes). Returns it,
 * empty when absent (jobs queued before includes existed); undefined when it is malformed.
 */
export function payloadIncludes(value: unknown): ExportInclude[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return undefined;
  const includes = value.map(knownInclude);
  return includes.every((include) => include !== undefined) ? includes : undefined;
}

/** A file students handed in, as the repository lists it for an exam (in archive order). */
export interface HandedInFile {
  readonly sessionId: number;
  readonly email: string;
  readonly kind: ArchivedKind;
  readonly fileId: number;
  readonly storageKey: string;
  readonly originalName: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
  readonly createdAt: number;
}

/** A handed-in file with its place in the archive. */
export interface PlannedFile extends HandedInFile {
  /** `<session id>-<email>/<safe, unique name>`. */
  readonly path: string;
}

/** The report of a session, made by the job while it writes the archive (include=reports). */
export interface PlannedReport {
  readonly sessionId: number;
  readonly email: string;
  /** `<session id>-<email>/report.pdf` (unique within the folder). */
  readonly path: string;
}

/** A report once written into the archive: its size and SHA-256 as written. */
export interface WrittenReport extends PlannedReport {
  readonly size: number;
  readonly sha256: string;
}

/** The name of a session's report inside its folder (made unique like any other file). */
export const REPORT_NAME = 'report.pdf';

/**
 * Places each file in its session's folder under a safe name, unique within the folder; files keep
 * the order given (the repository's: by session, exam document first, then uploads in sequence,
 * then what `include` added). A report for each of `reportSessions` comes after its session's files.
 * Returns the files and the reports with their paths.
 */
export function planArchive(
  files: readonly HandedInFile[],
  reportSessions: readonly Pick<ExamStudent, 'sessionId' | 'email'>[] = [],
): { files: PlannedFile[]; reports: PlannedReport[] } {
  const folders = new Map<string, (name: string) => string>();
  const namer = (folder: string) => {
    let unique = folders.get(folder);
    if (unique === undefined) {
      unique = uniqueNames();
      folders.set(folder, unique);
    }
    return unique;
  };
  const planned = files.map((file) => {
    const folder = sessionFolder(file.sessionId, file.email);
    const name = namer(folder)(safeFileName(file.originalName, `file-${file.fileId}`));
    return { ...file, path: `${folder}/${name}` };
  });
  const reports = reportSessions.map((session) => {
    const folder = sessionFolder(session.sessionId, session.email);
    return {
      sessionId: session.sessionId,
      email: session.email,
      path: `${folder}/${namer(folder)(REPORT_NAME)}`,
    };
  });
  return { files: planned, reports };
}

/** One entry of the archive, in the order it is written: a stored file or a session's report. */
export type ArchiveItem =
  | { readonly type: 'file'; readonly file: PlannedFile }
  | { readonly type: 'report'; readonly report: PlannedReport };

/**
 * The order the archive is written in: by session, each session's files first (in the order
 * given), then its report. Returns the items.
 */
export function archiveOrder(
  files: readonly PlannedFile[],
  reports: readonly PlannedReport[],
): ArchiveItem[] {
  const items: ArchiveItem[] = [
    ...files.map((file) => ({ type: 'file' as const, file })),
    ...reports.map((report) => ({ type: 'report' as const, report })),
  ];
  const sessionOf = (item: ArchiveItem) =>
    item.type === 'file' ? item.file.sessionId : item.report.sessionId;
  // Stable: within a session the files keep their order and the report comes last.
  return items.sort((a, b) => sessionOf(a) - sessionOf(b));
}

/** One file as `manifest.json` lists it. */
export interface ManifestFile {
  readonly path: string;
  readonly original_name: string;
  readonly kind: ArchivedKind;
  readonly content_type: string;
  readonly size: number;
  readonly sha256: string;
  readonly student_session_id: number;
  readonly email: string;
  readonly uploaded_at: string;
}

/** A student session of the exam, as the archive's index lists it (the repository's rows, mapped). */
export interface ExamStudent {
  readonly sessionId: number;
  readonly name: string;
  readonly email: string;
  readonly status: string;
  readonly archived: boolean;
  /** Epoch milliseconds, or null. */
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly endReason: string | null;
}

/** One student as `students.csv` and the manifest's `students` list them. */
export interface ManifestStudent {
  readonly student_session_id: number;
  readonly name: string;
  readonly email: string;
  readonly status: string;
  readonly archived: boolean;
  readonly start_time: string | null;
  readonly end_time: string | null;
  readonly end_reason: string | null;
  /** The session's folder in the archive, or null when it handed nothing in (no folder exists). */
  readonly folder: string | null;
  /** Paths of the session's files in the archive, in archive order; empty when it handed nothing in. */
  readonly files: readonly string[];
}

/** `manifest.json`, at the root of the archive. */
export interface Manifest {
  readonly exam_id: number;
  readonly generated_at: string;
  readonly file_count: number;
  readonly total_size: number;
  readonly student_count: number;
  readonly students: readonly ManifestStudent[];
  readonly files: readonly ManifestFile[];
}

function isoOrNull(millis: number | null): string | null {
  return millis === null ? null : new Date(millis).toISOString();
}

/**
 * The index of the archive: every student of the exam (`students`, as the repository lists them:
 * archived sessions and sessions that handed nothing in included), each with the paths of its files
 * among `files`. Returns them in the order given.
 */
export function buildStudentIndex(
  students: readonly ExamStudent[],
  files: readonly Pick<PlannedFile, 'sessionId' | 'path'>[],
): ManifestStudent[] {
  const bySession = new Map<number, string[]>();
  for (const file of files) {
    const paths = bySession.get(file.sessionId) ?? [];
    paths.push(file.path);
    bySession.set(file.sessionId, paths);
  }
  return students.map((student) => {
    const paths = bySession.get(student.sessionId) ?? [];
    return {
      student_session_id: student.sessionId,
      name: student.name,
      email: student.email,
      status: student.status,
      archived: student.archived,
      start_time: isoOrNull(student.startTime),
      end_time: isoOrNull(student.endTime),
      end_reason: student.endReason,
      folder: paths.length === 0 ? null : sessionFolder(student.sessionId, student.email),
      files: paths,
    };
  });
}

/** The columns of `students.csv`, in order. */
export const STUDENTS_CSV_COLUMNS = [
  'student_session_id',
  'name',
  'email',
  'status',
  'archived',
  'start_time',
  'end_time',
  'end_reason',
  'file_count',
  'folder',
  'files',
] as const;

/**
 * One CSV cell: text a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab
 * or a carriage return) gets a leading `'`, so a student named `=HYPERLINK(...)` stays text; then a
 * cell holding a comma, a quote or a line break is quoted, its quotes doubled (RFC 4180). Returns
 * the cell as written.
 */
export function csvCell(value: string | number | boolean | null): string {
  let text = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * `students.csv`: a header and one row per student of the index, CRLF line ends, UTF-8 with a byte
 * order mark (without it, Excel reads UTF-8 names as another code page). A student's files are one
 * cell, their paths one per line. Returns the text.
 */
export function studentsCsv(students: readonly ManifestStudent[]): string {
  const rows = students.map((student) =>
    [
      student.student_session_id,
      student.name,
      student.email,
      student.status,
      student.archived,
      student.start_time,
      student.end_time,
      student.end_reason,
      student.files.length,
      student.folder,
      student.files.join('\n'),
    ].map(csvCell),
  );
  return `\uFEFF${[STUDENTS_CSV_COLUMNS.map(csvCell), ...rows].map((row) => row.join(',')).join('\r\n')}\r\n`;
}

/**
 * The manifest of an archive of `files`, whose sizes and SHA-256 were measured while they were
 * written into it (and matched their records), with the index of every student. Returns it.
 */
export function buildManifest(
  examId: number,
  generatedAt: number,
  files: readonly PlannedFile[],
  students: readonly ManifestStudent[],
  reports: readonly WrittenReport[] = [],
): Manifest {
  const generated = new Date(generatedAt).toISOString();
  const reportFiles: ManifestFile[] = reports.map((report) => ({
    path: report.path,
    original_name: REPORT_NAME,
    kind: 'report',
    content_type: 'application/pdf',
    size: report.size,
    sha256: report.sha256,
    student_session_id: report.sessionId,
    email: report.email,
    uploaded_at: generated,
  }));
  const stored = files.map((file): ManifestFile => ({
    path: file.path,
    original_name: file.originalName,
    kind: file.kind,
    content_type: file.contentType,
    size: file.size,
    sha256: file.sha256,
    student_session_id: file.sessionId,
    email: file.email,
    uploaded_at: new Date(file.createdAt).toISOString(),
  }));
  const listed = [...stored, ...reportFiles].sort((a, b) => a.student_session_id - b.student_session_id);
  return {
    exam_id: examId,
    generated_at: generated,
    file_count: listed.length,
    total_size: listed.reduce((sum, file) => sum + file.size, 0),
    student_count: students.length,
    students,
    files: listed,
  };
}

/**
 * Whether a file of this type is worth deflating. Returns true for text-like types (text, JSON,
 * XML, SVG), which shrink; false for the rest (PDF, images, office documents, archives), which are
 * compressed already and are stored as they are, keeping the job fast.
 */
export function worthCompressing(contentType: string): boolean {
  return /^text\/|[/+](json|xml)$|^image\/svg\+xml$/.test(contentType);
}
