import { Readable } from 'node:stream';
import type { Db } from '../../db/database.ts';
import type { JobContext, JobQueue } from '../ports/jobs.ts';
import { StorageMissing } from '../../storage/storage.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound, NotFoundMessage } from '../errors.ts';
import { instituteOfExam } from '../data-keys/data-keys.repository.ts';
import type { Params } from '../input.ts';
import { createSessionReportsService } from '../reports/session-report.service.ts';
import { findManageableExam } from '../exams/exam-access.ts';
import type { StoredFile } from '../files/file.ts';
import type { FilesService } from '../files/files.service.ts';
import {
  archiveOrder,
  buildManifest,
  buildStudentIndex,
  EXAM_ZIP_JOB,
  type ExamStudent,
  type ExamExport,
  type ExportInclude,
  NO_ZIP,
  type PlannedFile,
  type PlannedReport,
  planArchive,
  readExportIncludes,
  type WrittenReport,
  studentsCsv,
  worthCompressing,
  zipDedupeKey,
  zipFileName,
  type ZipJobStatus,
  zipJobStatus,
} from './exam-export.ts';
import {
  findExportByJob,
  findLatestExport,
  type HeldAttempt,
  insertExport,
  listExamStudents,
  listExamPhotos,
  listExamRecordings,
  listHandedInFiles,
  releaseEarlierArchives,
  updateHeldExport,
} from './exam-exports.repository.ts';
import { type ArchiveEntry, streamArchive } from './zip-archive.ts';
import { emitExamDocumentsZipReady } from '../webhooks/emit.ts';

/** Attempts an export job gets: a storage hiccup is retried, a missing file fails for good soon. */
export const ZIP_JOB_MAX_ATTEMPTS = 3;

/** Progress is written at most this often (each report is a database write that renews the lease). */
const PROGRESS_INTERVAL_MS = 1000;

/** Longest error kept on the export row. */
const MAX_ERROR_LENGTH = 1000;

/** What building an export needs of its job's attempt (a JobContext). */
export type ExportJob = Pick<JobContext, 'jobId' | 'attempt' | 'signal' | 'progress'>;

/** An archive ready to be sent: its record, its bytes, and the name to download it under. */
export interface ZipDownload {
  readonly file: StoredFile;
  readonly body: Readable;
  readonly fileName: string;
}

export interface ExamExportsService {
  /**
   * Requests an archive of the files the exam's students handed in, for an actor who manages the
   * exam: records an export (queued) and enqueues its `exam_zip` job in one transaction. While the
   * exam already has such a job queued or running, nothing is created. Returns whether an export
   * was created. `params` may carry `include` (readExportIncludes): the photos, recordings and
   * reports to add, kept in the job's payload. Throws NotFound (Exam, the id as sent) when the exam
   * is missing, deleted or out of scope, Forbidden when the actor sees it but may not manage it,
   * Invalid naming `include` for an unknown value.
   */
  generate(actor: Actor, examId: string | number, params?: Params): Promise<{ created: boolean }>;
  /**
   * The exam's `zip_job_status` (see zipJobStatus), for an actor who manages the exam. Returns it;
   * throws NotFound or Forbidden as `generate` does.
   */
  status(actor: Actor, examId: string | number): Promise<ZipJobStatus>;
  /**
   * Opens the exam's archive, for an actor who manages the exam, once its latest export succeeded.
   * Returns the file, its open stream and its download name. Throws NotFound or Forbidden as
   * `generate` does, and NotFoundMessage (NO_ZIP) before a success or when the archive is gone.
   */
  download(actor: Actor, examId: string | number): Promise<ZipDownload>;
  /**
   * Builds the archive of exam `examId`'s export that job `job.jobId` belongs to (the `exam_zip`
   * handler's work): streams every handed-in file of the exam, checked against its record, with
   * `manifest.json` into a new stored file (with what `include` asks for: each session's photos,
   * finalised recordings, report), then records it on the export (replacing earlier
   * exports' archives). A retried attempt starts over. Resolves when done, or at once when the
   * export is gone or was already built. Throws, after recording `failure` and the reason on the
   * export, when a file is missing or differs from its record, the storage fails, or the attempt
   * lost its lease; throws without touching the export when it is another exam's.
   */
  build(examId: number, job: ExportJob, include?: readonly ExportInclude[]): Promise<void>;
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

function leaseLost(jobId: number): Error {
  return new Error(`exam zip job ${jobId} was taken over by another worker; this attempt stopped`);
}

/** The stored-file record of a handed-in file, as the files service opens it. */
function storedFileOf(file: PlannedFile): StoredFile {
  return {
    id: file.fileId,
    storageKey: file.storageKey,
    originalName: file.originalName,
    contentType: file.contentType,
    size: file.size,
    sha256: file.sha256,
    createdAt: file.createdAt,
  };
}

/**
 * Builds the zip-export use cases over the database, the clock, the files service (archives are
 * stored files) and the job queue. Returns the service; building it throws nothing.
 */
export function createExamExportsService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
  jobs: JobQueue;
}): ExamExportsService {
  const { db, clock, files, jobs } = deps;
  const reports = createSessionReportsService({ db, clock, files });

  /** The archive's record when both it and its stored object are there, else undefined. */
  async function readableArchive(fileId: number | null): Promise<StoredFile | undefined> {
    if (fileId === null) return undefined;
    const file = await files.find(fileId);
    if (file === undefined) return undefined;
    try {
      const probe = await files.open(file);
      // Only its existence was in question; an error while closing it (the object vanishing under
      // a lazy open) must not go unhandled.
      probe.on('error', () => undefined);
      probe.destroy();
      return file;
    } catch (error) {
      if (error instanceof StorageMissing) return undefined;
      throw error;
    }
  }

  async function statusOf(latest: ExamExport | undefined): Promise<ZipJobStatus> {
    if (latest === undefined) return zipJobStatus(undefined, undefined, false);
    if (latest.status === 'success') {
      return zipJobStatus(latest, undefined, (await readableArchive(latest.fileId)) !== undefined);
    }
    const job = latest.jobId === null ? undefined : await jobs.find(latest.jobId);
    return zipJobStatus(latest, job, false);
  }

  /** The archive entry of a stored file, opened through the files service and checked against its record. */
  function storedEntry(file: PlannedFile): ArchiveEntry {
    return {
      path: file.path,
      size: file.size,
      sha256: file.sha256,
      compress: worthCompressing(file.contentType),
      modifiedAt: new Date(file.createdAt),
      describe: `file ${file.fileId} ("${file.originalName}") of student session ${file.sessionId}`,
      open: async () => {
        try {
          return await files.open(storedFileOf(file));
        } catch (error) {
          if (!(error instanceof StorageMissing)) throw error;
          throw new Error(
            `file ${file.fileId} ("${file.originalName}") of student session ${file.sessionId} is missing from storage`,
            { cause: error },
          );
        }
      },
    };
  }

  /**
   * The archive entry of a session's report: rendered only when the archive reaches it (one PDF in
   * memory at a time), measured as it is written into `written`.
   */
  function reportEntry(report: PlannedReport, generatedAt: number, written: WrittenReport[]): ArchiveEntry {
    return {
      path: report.path,
      size: undefined,
      sha256: undefined,
      compress: false,
      modifiedAt: new Date(generatedAt),
      describe: `the report of student session ${report.sessionId}`,
      measured: (size, sha256) => written.push({ ...report, size, sha256 }),
      open: async () => {
        const pdf = await reports.render(report.sessionId);
        if (pdf === undefined)
          throw new Error(`student session ${report.sessionId} is gone; its report was not made`);
        return Readable.from([Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength)]);
      },
    };
  }

  /** Writes the archive of `planned` (and `reports`) into a new stored file. Returns its record. */
  async function storeArchive(
    examId: number,
    planned: readonly PlannedFile[],
    students: readonly ExamStudent[],
    job: ExportJob,
    plannedReports: readonly PlannedReport[] = [],
  ): Promise<StoredFile> {
    // Read before the archive starts: it opens its first file at once, and must not wait unheard.
    const instituteId = await instituteOfExam(db, examId);
    if (instituteId === undefined) throw new NotFound('Exam', examId);
    const generatedAt = clock.now();
    let reported = Number.NEGATIVE_INFINITY;
    const written: WrittenReport[] = [];
    const entries: ArchiveEntry[] = archiveOrder(planned, plannedReports).map((item) =>
      item.type === 'file' ? storedEntry(item.file) : reportEntry(item.report, generatedAt, written),
    );
    const index = buildStudentIndex(students, [...planned, ...plannedReports]);
    const body = streamArchive({
      entries,
      generated: [
        { path: 'students.csv', content: () => Buffer.from(studentsCsv(index)) },
        {
          path: 'manifest.json',
          content: () =>
            Buffer.from(
              `${JSON.stringify(buildManifest(examId, generatedAt, planned, index, written), null, 2)}\n`,
            ),
        },
      ],
      generatedModifiedAt: new Date(generatedAt),
      signal: job.signal,
      async beforeEntry(index) {
        const now = clock.now();
        if (index < entries.length && now - reported < PROGRESS_INTERVAL_MS) return;
        reported = now;
        await job.progress(`${index}/${entries.length} files`);
      },
    });
    return files.keepStream(body, {
      originalName: zipFileName(examId),
      contentType: 'application/zip',
      instituteId,
    });
  }

  return {
    async generate(actor, examId, params = {}) {
      const exam = await findManageableExam(db, actor, examId);
      const include = readExportIncludes(params);
      return db.transaction().execute(async (trx) => {
        const queued = await jobs.enqueue(trx, {
          kind: EXAM_ZIP_JOB,
          // Without `include` the payload is what it always was.
          payload: include.length === 0 ? { examId: exam.id } : { examId: exam.id, include },
          dedupeKey: zipDedupeKey(exam.id),
          maxAttempts: ZIP_JOB_MAX_ATTEMPTS,
        });
        if (!queued.created) return { created: false };
        await insertExport(trx, { examId: exam.id, jobId: queued.id, now: clock.now() });
        return { created: true };
      });
    },

    async status(actor, examId) {
      const exam = await findManageableExam(db, actor, examId);
      return statusOf(await findLatestExport(db, exam.id));
    },

    async download(actor, examId) {
      const exam = await findManageableExam(db, actor, examId);
      const latest = await findLatestExport(db, exam.id);
      if (latest?.status !== 'success' || latest.fileId === null) throw new NotFoundMessage(NO_ZIP);
      const file = await files.find(latest.fileId);
      if (file === undefined) throw new NotFoundMessage(NO_ZIP);
      try {
        return { file, body: await files.open(file), fileName: zipFileName(exam.id) };
      } catch (error) {
        if (error instanceof StorageMissing) throw new NotFoundMessage(NO_ZIP);
        throw error;
      }
    },

    async build(examId, job, include = []) {
      const exported = await findExportByJob(db, job.jobId);
      // Deleted with its exam: nothing left to build.
      if (exported === undefined) return;
      if (exported.examId !== examId) {
        throw new Error(`exam zip job ${job.jobId} belongs to exam ${exported.examId}, not exam ${examId}`);
      }
      // An earlier attempt built it and only the job's outcome was lost (a crash in between).
      if (exported.status === 'success' && exported.fileId !== null) return;
      const held: HeldAttempt = { jobId: job.jobId, attempt: job.attempt };
      const started = await updateHeldExport(db, exported.id, held, {
        status: 'running',
        error: null,
        updated_at: clock.now(),
      });
      if (!started) throw leaseLost(job.jobId);
      // Only this attempt's own state is written; a newer attempt's is left alone. A failure to
      // write it is not the attempt's error, which stays the one reported.
      const recordFailure = (error: unknown) =>
        updateHeldExport(db, exported.id, held, {
          status: 'failure',
          error: errorText(error),
          updated_at: clock.now(),
        }).catch(() => false);

      let archive: StoredFile;
      try {
        const handedIn = await listHandedInFiles(db, exported.examId);
        const photos = include.includes('photos') ? await listExamPhotos(db, exported.examId) : [];
        const recordings = include.includes('recordings')
          ? await listExamRecordings(db, exported.examId)
          : [];
        const students = await listExamStudents(db, exported.examId);
        // Stable: by session, the handed-in files first, then photos, then recordings.
        const stored = [...handedIn, ...photos, ...recordings].sort((a, b) => a.sessionId - b.sessionId);
        const planned = planArchive(stored, include.includes('reports') ? students : []);
        archive = await storeArchive(exported.examId, planned.files, students, job, planned.reports);
      } catch (error) {
        await recordFailure(error);
        throw error;
      }
      let released: number[] | undefined;
      try {
        released = await db.transaction().execute(async (trx) => {
          const now = clock.now();
          const recorded = await updateHeldExport(trx, exported.id, held, {
            status: 'success',
            file_id: archive.id,
            error: null,
            updated_at: now,
          });
          if (!recorded) return undefined;
          // The integrator hears of the archive exactly when its success is committed.
          await emitExamDocumentsZipReady(jobs, trx, exported.examId, now);
          return releaseEarlierArchives(trx, exported.examId, exported.id, now);
        });
      } catch (error) {
        await files.remove([archive.id]).catch(() => undefined);
        await recordFailure(error);
        throw error;
      }
      if (released === undefined) {
        // Another worker owns the job now; its archive, not this one, is the export's.
        await files.remove([archive.id]);
        throw leaseLost(job.jobId);
      }
      // After the rows let go of them: an archive is never removed while a row points at it.
      await files.remove(released);
    },
  };
}
