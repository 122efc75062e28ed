import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import type { Actor } from '../../src/domain/access.ts';
import {
  buildStudentIndex,
  csvCell,
  type ExamExport,
  type PlannedFile,
  safeFileName,
  studentsCsv,
  sessionFolder,
  uniqueNames,
  zipJobStatus,
} from '../../src/domain/exports/exam-export.ts';
import type { StoredFile } from '../../src/domain/files/file.ts';
import type { JobContext } from '../../src/domain/ports/jobs.ts';
import type { JobHandler } from '../../src/jobs/job.ts';
import { createWorker } from '../../src/jobs/worker.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { assertMatchesManifest, digestZip, manifestOf } from '../helpers/zip-archive.ts';

const silent = pino({ level: 'silent' });
const HOUR = 60 * 60 * 1000;

describe('exam zip naming and status (pure)', () => {
  it('keeps only the last segment of a path and replaces what no file system allows', () => {
    assert.equal(safeFileName('../../etc/passwd', 'x'), 'passwd');
    assert.equal(safeFileName('C:\\Users\\ada\\essay.docx', 'x'), 'essay.docx');
    assert.equal(safeFileName('a<b>c:d"e|f?g*h.txt', 'x'), 'a_b_c_d_e_f_g_h.txt');
    assert.equal(safeFileName('tab\there\u0000.txt', 'x'), 'tab_here_.txt');
    assert.equal(safeFileName('  .hidden. ', 'x'), 'hidden');
    assert.equal(safeFileName('NUL', 'x'), '_NUL');
    assert.equal(safeFileName('com1.txt', 'x'), '_com1.txt');
    assert.equal(safeFileName('..', 'file-7'), 'file-7');
    assert.equal(safeFileName('', 'file-7'), 'file-7');
    assert.equal(safeFileName('Prüfung é.pdf', 'x'), 'Prüfung é.pdf');
  });

  it('shortens a long name to 200 bytes of UTF-8, keeping the extension', () => {
    const name = safeFileName(`${'ü'.repeat(300)}.pdf`, 'x');
    assert.ok(Buffer.byteLength(name) <= 200, `${Buffer.byteLength(name)} bytes`);
    assert.ok(name.endsWith('ü.pdf'));
  });

  it('hands out each name once per folder, without regard to case', () => {
    const unique = uniqueNames();
    assert.equal(unique('a.pdf'), 'a.pdf');
    assert.equal(unique('A.pdf'), 'A (2).pdf');
    assert.equal(unique('a.pdf'), 'a (3).pdf');
    assert.equal(unique('a (2).pdf'), 'a (2) (2).pdf');
    assert.equal(unique('README'), 'README');
    assert.equal(unique('readme'), 'readme (2)');
  });

  it('writes CSV cells escaped (RFC 4180) and formula-looking text as text', () => {
    assert.equal(csvCell('plain'), 'plain');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(12), '12');
    assert.equal(csvCell(false), 'false');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    for (const start of ['=', '+', '-', '@', '\t']) {
      assert.equal(csvCell(`${start}1`), `'${start}1`, JSON.stringify(start));
    }
    assert.equal(csvCell('=a,"b"'), `"'=a,""b"""`);
    assert.equal(csvCell('\rcmd'), `"'\rcmd"`);
    assert.equal(csvCell('a=b'), 'a=b', 'only a leading sign is a formula');
  });

  it('indexes every student, with or without files, in students.csv', () => {
    const file = (sessionId: number, path: string) => ({ sessionId, path }) as PlannedFile;
    const index = buildStudentIndex(
      [
        {
          sessionId: 1,
          name: 'Ada',
          email: 'ada@x.org',
          status: 'exam_finished',
          archived: false,
          startTime: 0,
          endTime: 60_000,
          endReason: 'finished',
        },
        {
          sessionId: 2,
          name: 'Idle',
          email: 'idle@x.org',
          status: 'registered',
          archived: true,
          startTime: null,
          endTime: null,
          endReason: null,
        },
      ],
      [file(1, '1-ada@x.org/a.pdf'), file(1, '1-ada@x.org/b.pdf')],
    );
    assert.deepEqual(index[1], {
      student_session_id: 2,
      name: 'Idle',
      email: 'idle@x.org',
      status: 'registered',
      archived: true,
      start_time: null,
      end_time: null,
      end_reason: null,
      folder: null,
      files: [],
    });
    assert.equal(
      studentsCsv(index),
      '\uFEFFstudent_session_id,name,email,status,archived,start_time,end_time,end_reason,file_count,folder,files\r\n' +
        '1,Ada,ada@x.org,exam_finished,false,1970-01-01T00:00:00.000Z,1970-01-01T00:01:00.000Z,finished,2,1-ada@x.org,"1-ada@x.org/a.pdf\n1-ada@x.org/b.pdf"\r\n' +
        '2,Idle,idle@x.org,registered,true,,,,0,,\r\n',
    );
  });

  it('names a session folder after its id and a path-safe email', () => {
    assert.equal(sessionFolder(12, 'ada+x@example.org'), '12-ada+x@example.org');
    assert.equal(sessionFolder(3, '"a/b\\..c"@example.org'), '3-_a_b_..c_@example.org');
  });

  it('derives zip_job_status from the latest export, its job and its archive', () => {
    const base: ExamExport = {
      id: 1,
      examId: 1,
      status: 'queued',
      jobId: 1,
      fileId: null,
      error: null,
      createdAt: 0,
      updatedAt: 0,
    };
    assert.equal(zipJobStatus(undefined, undefined, false), 'never_run');
    assert.equal(zipJobStatus(base, { status: 'queued' }, false), 'queued');
    assert.equal(zipJobStatus({ ...base, status: 'running' }, { status: 'running' }, false), 'running');
    // A failed attempt waiting out its backoff is still on its way.
    assert.equal(zipJobStatus({ ...base, status: 'failure' }, { status: 'queued' }, false), 'queued');
    assert.equal(zipJobStatus({ ...base, status: 'failure' }, { status: 'running' }, false), 'running');
    assert.equal(zipJobStatus({ ...base, status: 'failure' }, { status: 'failed' }, false), 'failure');
    // The last attempt's worker vanished: the queue failed the job, the row still says running.
    assert.equal(zipJobStatus({ ...base, status: 'running' }, { status: 'failed' }, false), 'failure');
    assert.equal(zipJobStatus({ ...base, status: 'running' }, undefined, false), 'failure');
    const built = { ...base, status: 'success' as const, fileId: 9 };
    assert.equal(zipJobStatus(built, { status: 'succeeded' }, true), 'success');
    assert.equal(zipJobStatus(built, { status: 'running' }, true), 'success');
    assert.equal(zipJobStatus(built, { status: 'succeeded' }, false), 'not_found');
  });
});

for (const dialect of DIALECTS) {
  describe(`exam_zip job [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: Actor;
    let zipHandler: JobHandler;

    /** A worker over the server's database with `handlers` (the server's own by default). */
    function worker(handlers: readonly JobHandler[] = server.app.jobHandlers) {
      return createWorker({
        db: server.app.database.db,
        dialect,
        clock,
        logger: silent,
        handlers,
      });
    }

    /** The server's handlers with exam_zip's context changed for the run: `wrap` gets the real one. */
    function withZipContext(wrap: (ctx: JobContext) => JobContext): JobHandler[] {
      return [
        ...server.app.jobHandlers.filter((handler) => handler.kind !== 'exam_zip'),
        { kind: 'exam_zip', run: (payload, ctx) => zipHandler.run(payload, wrap(ctx)) },
      ];
    }

    async function examWithFiles(
      count: number,
      size = 50_000,
    ): Promise<{ exam: number; files: StoredFile[] }> {
      const exam = await server.app.services.exams.create(owner, {
        name: `Job exam ${crypto.randomBytes(3).toString('hex')}`,
        type: 'classroom',
        duration_minutes: 30,
      });
      const session = await server.app.services.studentSessions.create(owner, exam.id, {
        name: 'Student',
        email: 'student@example.org',
      });
      const files: StoredFile[] = [];
      for (let index = 0; index < count; index += 1) {
        const file = await server.app.services.files.keepStream(Readable.from([crypto.randomBytes(size)]), {
          instituteId: owner.instituteId,
          originalName: `part-${index}.bin`,
          contentType: 'application/octet-stream',
        });
        await server.app.database.db
          .insertInto('session_files')
          .values({
            student_session_id: session.id,
            kind: 'upload',
            file_id: file.id,
            sequence: index,
            created_at: clock.now(),
          })
          .execute();
        files.push(file);
      }
      return { exam: exam.id, files };
    }

    async function latestExport(exam: number) {
      return server.app.database.db
        .selectFrom('exam_zip_exports')
        .selectAll()
        .where('exam_id', '=', exam)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
    }

    async function jobOf(exam: number) {
      const job = await server.app.services.jobs.latest('exam_zip', `exam:${exam}`);
      assert.ok(job !== undefined, 'the exam has a zip job');
      return job;
    }

    async function fileCount(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    /** Downloads the exam's archive through the service and checks it against its manifest. */
    async function openArchive(exam: number) {
      const download = await server.app.services.examExports.download(owner, exam);
      const chunks: Buffer[] = [];
      for await (const chunk of download.body) chunks.push(chunk as Buffer);
      const entries = await digestZip(Buffer.concat(chunks));
      const manifest = manifestOf(entries);
      assertMatchesManifest(entries, manifest);
      return manifest;
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      const teacher = await server.user(institute, 'teacher');
      owner = { id: teacher.id, instituteId: institute, role: 'teacher' };
      const handler = server.app.jobHandlers.find((candidate) => candidate.kind === 'exam_zip');
      assert.ok(handler !== undefined, 'the app registers an exam_zip handler');
      zipHandler = handler;
    });

    beforeEach(async () => {
      // Each test's job is the only one due.
      await server.app.database.db.deleteFrom('exam_zip_exports').execute();
      await server.app.database.db.deleteFrom('jobs').execute();
    });

    after(async () => {
      await server.close();
    });

    it('reports progress as files done out of all, at most once a second', async () => {
      const { exam } = await examWithFiles(3, 1000);
      await server.app.services.examExports.generate(owner, exam);
      const still: string[] = [];
      assert.ok(
        await worker(
          withZipContext((ctx) => ({
            ...ctx,
            progress: async (value) => {
              still.push(value);
              await ctx.progress(value);
            },
          })),
        ).runOnce(),
      );
      assert.deepEqual(still, ['0/3 files', '3/3 files'], 'the clock stood still: first and last only');
      assert.equal((await jobOf(exam)).progress, '3/3 files');

      await server.app.services.examExports.generate(owner, exam);
      const moving: string[] = [];
      assert.ok(
        await worker(
          withZipContext((ctx) => ({
            ...ctx,
            progress: async (value) => {
              moving.push(value);
              clock.current += 1500;
              await ctx.progress(value);
            },
          })),
        ).runOnce(),
      );
      assert.deepEqual(moving, ['0/3 files', '1/3 files', '2/3 files', '3/3 files']);
      assert.equal((await latestExport(exam)).status, 'success');
    });

    it('starts a retried attempt over and replaces the partial result of the interrupted one', async () => {
      const { exam, files } = await examWithFiles(4, 200_000);
      await server.app.services.examExports.generate(owner, exam);
      const before = await fileCount();
      // The first attempt is cut off half way: its signal aborts once two files are in the archive.
      const cut = new AbortController();
      let reports = 0;
      const interrupted = withZipContext((ctx) => ({
        ...ctx,
        signal: cut.signal,
        progress: async (value) => {
          reports += 1;
          clock.current += 1500;
          if (reports === 3) cut.abort(new Error('worker went away'));
          await ctx.progress(value);
        },
      }));
      assert.ok(await worker(interrupted).runOnce());
      const failed = await latestExport(exam);
      assert.equal(failed.status, 'failure');
      assert.equal(failed.error, 'worker went away');
      assert.equal(failed.file_id, null);
      assert.equal((await jobOf(exam)).status, 'queued', 'the queue retries it');
      assert.equal(await fileCount(), before, 'no partial archive was recorded');
      if (server.app.config.storage.kind === 'local') {
        const temporary = path.join(server.app.config.storage.root, '.tmp');
        assert.deepEqual(fs.readdirSync(temporary), [], 'and no partial file is left on disk');
      }

      clock.current += HOUR;
      assert.equal(await server.app.services.examExports.status(owner, exam), 'queued');
      assert.ok(await worker().runOnce());
      const built = await latestExport(exam);
      assert.equal(built.status, 'success');
      assert.equal(built.error, null);
      assert.equal((await jobOf(exam)).attempts, 2);
      assert.equal(await fileCount(), before + 1, 'exactly one archive');
      const manifest = await openArchive(exam);
      assert.deepEqual(
        manifest.files.map((file) => [file.original_name, file.size, file.sha256]),
        files.map((file) => [file.originalName, file.size, file.sha256]),
      );
    });

    it('fails when a stored file differs from its record, and keeps no archive', async () => {
      const { exam, files } = await examWithFiles(2, 1000);
      const [first] = files;
      assert.ok(first !== undefined);
      await server.app.database.db
        .updateTable('files')
        .set({ sha256: '0'.repeat(64) })
        .where('id', '=', first.id)
        .execute();
      await server.app.services.examExports.generate(owner, exam);
      const before = await fileCount();
      assert.ok(await worker().runOnce());
      const row = await latestExport(exam);
      assert.equal(row.status, 'failure');
      assert.equal(
        row.error,
        `file ${first.id} ("part-0.bin") of student session ${await sessionOf(first.id)} does not match its record (size or SHA-256 differs)`,
      );
      assert.equal(await fileCount(), before);
    });

    it('writes nothing for an attempt that no longer holds the job', async () => {
      const { exam } = await examWithFiles(1, 1000);
      await server.app.services.examExports.generate(owner, exam);
      const job = await jobOf(exam);
      const before = await fileCount();
      await assert.rejects(
        server.app.services.examExports.build(exam, {
          jobId: job.id,
          attempt: 4,
          signal: new AbortController().signal,
          progress: () => Promise.resolve(),
        }),
        /taken over by another worker/,
      );
      const row = await latestExport(exam);
      assert.equal(row.status, 'queued');
      assert.equal(row.error, null);
      assert.equal(await fileCount(), before);
    });

    it('succeeds without building anything when its export is gone', async () => {
      const { exam } = await examWithFiles(1, 1000);
      await server.app.services.examExports.generate(owner, exam);
      await server.app.database.db.deleteFrom('exam_zip_exports').where('exam_id', '=', exam).execute();
      const before = await fileCount();
      assert.ok(await worker().runOnce());
      assert.equal((await jobOf(exam)).status, 'succeeded');
      assert.equal(await fileCount(), before);
    });

    it('fails a job whose payload names no exam, without retrying', async () => {
      const { id } = await server.app.services.jobs.enqueue(server.app.database.db, {
        kind: 'exam_zip',
        payload: { exam: 'x' },
        maxAttempts: 1,
      });
      assert.ok(await worker().runOnce());
      const job = await server.app.services.jobs.find(id);
      assert.equal(job?.status, 'failed');
      assert.equal(job?.lastError, 'an exam_zip job needs {"examId": <exam id>}, got {"exam":"x"}');
    });

    /** The session a file was handed in by. */
    async function sessionOf(fileId: number): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('session_files')
        .select('student_session_id')
        .where('file_id', '=', fileId)
        .executeTakeFirstOrThrow();
      return row.student_session_id;
    }
  });
}
