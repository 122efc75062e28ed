import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import { createWorker } from '../../../src/jobs/worker.ts';
import { createStorage } from '../../../src/storage/index.ts';
import { assertNotStored, assertStored } from '../../helpers/files.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { assertMatchesManifest, digestZip, manifestOf, studentsCsvOf } from '../../helpers/zip-archive.ts';
import { NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const NO_ZIP = { error: "Couldn't find the exam documents zip" };
const GENERATE = '/exams/:id/generate_exam_documents_zip';
const STATUS = '/exams/:id/status_exam_documents_zip';
const DOWNLOAD = '/exams/:id/download_exam_documents_zip';
const silent = pino({ level: 'silent' });

/** A file a test handed in, with where the archive must put it. */
interface HandedIn {
  readonly file: StoredFile;
  readonly bytes: Buffer;
  readonly sessionId: number;
  readonly email: string;
  readonly kind: 'upload' | 'exam_document';
  readonly path: string;
}

function assertAnswer(answer: HttpAnswer, status: number, body: unknown): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

function assertStatus(answer: HttpAnswer, status: string): void {
  assertAnswer(answer, 200, { zip_job_status: status });
}

function assertAccepted(answer: HttpAnswer): void {
  assert.equal(answer.status, 202, answer.text);
  assert.equal(answer.bytes.length, 0, 'no body');
}

for (const dialect of DIALECTS) {
  describe(`V3 exam documents zip [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let superuser: TestUser;
    let admin: TestUser;
    let owner: TestUser;
    let comanager: TestUser;
    let otherTeacher: TestUser;
    let proctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsideAdmin: TestUser;
    let home: number;
    let examId: number;
    const handedIn: HandedIn[] = [];
    let leftOut: StoredFile[] = [];
    let firstArchive: StoredFile | undefined;

    /** Runs due jobs the way `invigil worker` does, one at a time. Returns how many ran. */
    async function runJobs(): Promise<number> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: silent,
        handlers: server.app.jobHandlers,
      });
      let ran = 0;
      while (await worker.runOnce()) ran += 1;
      return ran;
    }

    async function store(name: string, bytes: Buffer, contentType: string): Promise<StoredFile> {
      return server.app.services.files.keepStream(Readable.from([bytes]), {
        instituteId: home,
        originalName: name,
        contentType,
      });
    }

    /** Stores a file and lists it among the session's files of `kind`, as the candidate room does. */
    async function sessionFile(sessionId: number, kind: string, sequence: number, file: StoredFile) {
      await server.app.database.db
        .insertInto('session_files')
        .values({ student_session_id: sessionId, kind, file_id: file.id, sequence, created_at: clock.now() })
        .execute();
    }

    async function newExam(): Promise<number> {
      return (
        await server.app.services.exams.create(
          { id: owner.id, instituteId: home, role: 'teacher' },
          {
            name: `Zip exam ${crypto.randomBytes(3).toString('hex')}`,
            type: 'classroom',
            duration_minutes: 60,
          },
        )
      ).id;
    }

    async function newSession(exam: number, email: string): Promise<number> {
      const actor = { id: admin.id, instituteId: home, role: 'administrator' as const };
      return (await server.app.services.studentSessions.create(actor, exam, { name: 'Student', email })).id;
    }

    async function generate(user: TestUser, id: number): Promise<HttpAnswer> {
      return user.client.v3('PUT', GENERATE, { id });
    }

    async function exportRows(exam: number) {
      return server.app.database.db
        .selectFrom('exam_zip_exports')
        .selectAll()
        .where('exam_id', '=', exam)
        .orderBy('id')
        .execute();
    }

    async function zipJobs(exam: number) {
      return server.app.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', 'exam_zip')
        .where('dedupe_key', '=', `exam:${exam}`)
        .orderBy('id')
        .execute();
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      home = await server.institute();
      const elsewhere = await server.institute();
      superuser = await server.user(elsewhere, 'superuser');
      admin = await server.user(home, 'administrator');
      owner = await server.user(home, 'teacher');
      comanager = await server.user(home, 'teacher');
      otherTeacher = await server.user(home, 'teacher');
      proctor = await server.user(home, 'proctor');
      reviewer = await server.user(home, 'reviewer');
      auditor = await server.user(home, 'auditor');
      outsideAdmin = await server.user(elsewhere, 'administrator');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Final exam',
        type: 'classroom',
        duration_minutes: 90,
      });
      examId = (created.json as { exam: { id: number } }).exam.id;
      const added = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id: examId,
        comanager_id: comanager.id,
      });
      assert.equal(added.status, 200, added.text);

      // Three students: two hand in files (with clashing and hostile names), one hands in nothing.
      const ada = { id: await newSession(examId, 'ada+exam@example.org'), email: 'ada+exam@example.org' };
      const bob = { id: await newSession(examId, 'bob@example.org'), email: 'bob@example.org' };
      await newSession(examId, 'idle@example.org');
      const hand = async (
        session: { id: number; email: string },
        kind: 'upload' | 'exam_document',
        name: string,
        path: (file: StoredFile) => string,
        contentType = 'application/pdf',
        size = 3000,
      ) => {
        const bytes = crypto.randomBytes(size);
        const file = await store(name, bytes, contentType);
        if (kind === 'upload') await sessionFile(session.id, 'upload', handedIn.length, file);
        else {
          await server.app.database.db
            .updateTable('student_sessions')
            .set({ exam_document_file_id: file.id })
            .where('id', '=', session.id)
            .execute();
        }
        handedIn.push({ file, bytes, sessionId: session.id, email: session.email, kind, path: path(file) });
      };
      const adaFolder = `${ada.id}-ada+exam@example.org`;
      const bobFolder = `${bob.id}-bob@example.org`;
      await hand(ada, 'exam_document', 'answers.pdf', () => `${adaFolder}/answers.pdf`);
      await hand(ada, 'upload', 'answers.pdf', () => `${adaFolder}/answers (2).pdf`);
      await hand(ada, 'upload', 'ANSWERS.pdf', () => `${adaFolder}/ANSWERS (3).pdf`);
      await hand(ada, 'upload', 'notes.txt', () => `${adaFolder}/notes.txt`, 'text/plain', 20_000);
      await hand(bob, 'upload', '../../etc/passwd', () => `${bobFolder}/passwd`, 'text/plain');
      await hand(bob, 'upload', 'C:\\Users\\bob\\essay:v2?.docx', () => `${bobFolder}/essay_v2_.docx`);
      await hand(bob, 'upload', 'con.txt', () => `${bobFolder}/_con.txt`, 'text/plain');
      // Nothing usable in the name: the file is named after its id.
      await hand(bob, 'upload', '...', (file) => `${bobFolder}/file-${file.id}`, 'application/octet-stream');

      // Files students did not hand in: a recording chunk and a face photo stay out of the archive.
      const recording = await store('chunk-1.webm', crypto.randomBytes(500), 'video/webm');
      await sessionFile(bob.id, 'recording', 1, recording);
      const photo = await store('face.png', crypto.randomBytes(200), 'image/png');
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ face_photo_file_id: photo.id })
        .where('id', '=', bob.id)
        .execute();
      leftOut = [recording, photo];
    });

    after(async () => {
      await server.close();
    });

    it('answers never_run, and 404 with the exact message on download, before any request', async () => {
      assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'never_run');
      assertAnswer(await owner.client.v3('GET', DOWNLOAD, { id: examId }), 404, NO_ZIP);
    });

    it('answers 202 with an empty body and queues one export; repeats while queued create nothing', async () => {
      assertAccepted(await generate(owner, examId));
      assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'queued');
      assertAccepted(await generate(comanager, examId));
      assertAccepted(await generate(admin, examId));
      const rows = await exportRows(examId);
      assert.equal(rows.length, 1, 'one export');
      assert.equal(rows[0]?.status, 'queued');
      const jobs = await zipJobs(examId);
      assert.equal(jobs.length, 1, 'one job');
      assert.equal(rows[0]?.job_id, jobs[0]?.id, 'the export names its job');
      assert.deepEqual(JSON.parse(jobs[0]?.payload ?? 'null'), { examId });
      assertAnswer(await owner.client.v3('GET', DOWNLOAD, { id: examId }), 404, NO_ZIP);
    });

    it('builds the archive with a worker: success, and the download opens to one folder per session and a manifest', async () => {
      assert.equal(await runJobs(), 1);
      assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'success');
      const [job] = await zipJobs(examId);
      assert.equal(job?.status, 'succeeded');
      assert.equal(job?.progress, `${handedIn.length}/${handedIn.length} files`);

      const answer = await owner.client.v3('GET', DOWNLOAD, { id: examId });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['content-type'], 'application/zip');
      assert.match(
        String(answer.headers['content-disposition']),
        new RegExp(`^attachment; filename="exam-${examId}-documents\\.zip"`),
      );
      assert.equal(answer.headers['content-length'], String(answer.bytes.length));
      assert.equal(answer.headers['cache-control'], 'private, no-store');

      const entries = await digestZip(answer.bytes);
      const manifest = manifestOf(entries);
      assert.equal(manifest.exam_id, examId);
      assert.equal(manifest.generated_at, new Date(clock.now()).toISOString());
      const listed = assertMatchesManifest(entries, manifest);
      assert.deepEqual(
        manifest.files.map((file) => file.path),
        handedIn.map((file) => file.path),
        'every handed-in file, by session, exam document first, in the order handed in',
      );
      for (const expected of handedIn) {
        const file = listed.get(expected.path);
        assert.ok(file !== undefined, `${expected.path} is listed`);
        const stored = await assertStored(server, expected.file.id, expected.bytes);
        assert.equal(file.size, stored.size, `${expected.path}: the stored size`);
        assert.equal(file.sha256, stored.sha256, `${expected.path}: the stored SHA-256`);
        assert.equal(
          file.sha256,
          crypto.createHash('sha256').update(expected.bytes).digest('hex'),
          `${expected.path}: the SHA-256 of the bytes handed in`,
        );
        assert.equal(file.original_name, expected.file.originalName);
        assert.equal(file.kind, expected.kind);
        assert.equal(file.content_type, expected.file.contentType);
        assert.equal(file.student_session_id, expected.sessionId);
        assert.equal(file.email, expected.email);
        assert.equal(file.uploaded_at, new Date(expected.file.createdAt).toISOString());
      }
      // Text is deflated; a PDF is stored as it is.
      assert.equal(entries.get(handedIn[3]?.path ?? '')?.compressionMethod, 8);
      assert.equal(entries.get(handedIn[0]?.path ?? '')?.compressionMethod, 0);
      for (const file of leftOut) {
        assert.ok(
          !manifest.files.some((listedFile) => listedFile.original_name === file.originalName),
          `${file.originalName} (not handed in) is left out`,
        );
      }
      // The index: every student, the one who handed in nothing too, with their files.
      assert.equal(manifest.student_count, 3);
      const csv = studentsCsvOf(entries);
      assert.deepEqual(
        csv.map((student) => [student.email, student.file_count, student.status]),
        [
          ['ada+exam@example.org', '4', 'registered'],
          ['bob@example.org', '4', 'registered'],
          ['idle@example.org', '0', 'registered'],
        ],
      );
      const idle = csv[2];
      assert.equal(idle?.files, '');
      assert.equal(idle?.folder, '');
      assert.equal(idle?.start_time, '');
      assert.equal(manifest.students[2]?.folder, null);
      assert.deepEqual(manifest.students[2]?.files, []);
      assert.deepEqual(
        csv.map((student) => (student.files ?? '').split('\n').filter(Boolean)),
        manifest.students.map((student) => student.files),
        'students.csv and the manifest list the same files',
      );
      assert.deepEqual(
        manifest.students.flatMap((student) => student.files),
        handedIn.map((file) => file.path),
        'every handed-in file under its student',
      );
      assert.equal(entries.get('students.csv')?.compressionMethod, 8);
      const [row] = await exportRows(examId);
      assert.ok(row?.file_id !== null && row?.file_id !== undefined);
      firstArchive = await assertStored(server, row.file_id, answer.bytes);
      assert.equal(firstArchive.originalName, `exam-${examId}-documents.zip`);
      assert.equal(firstArchive.contentType, 'application/zip');
    });

    it('queues a new export after success; the new archive replaces the old one', async () => {
      assert.ok(firstArchive !== undefined, 'the previous test built an archive');
      clock.current += 60_000;
      assertAccepted(await generate(owner, examId));
      assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'queued');
      assertAnswer(await owner.client.v3('GET', DOWNLOAD, { id: examId }), 404, NO_ZIP);
      assert.equal((await exportRows(examId)).length, 2);
      assert.equal(await runJobs(), 1);
      assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'success');
      const rows = await exportRows(examId);
      assert.equal(rows[0]?.file_id, null, 'the older export let go of its archive');
      await assertNotStored(server, firstArchive);
      const answer = await owner.client.v3('GET', DOWNLOAD, { id: examId });
      assert.equal(answer.status, 200);
      const manifest = manifestOf(await digestZip(answer.bytes));
      assert.equal(manifest.generated_at, new Date(clock.now()).toISOString(), 'the newer archive');
    });

    it('answers not_found once the archive is gone, and 404 with the exact message on download', async () => {
      const exam = await newExam();
      assertAccepted(await generate(owner, exam));
      assert.equal(await runJobs(), 1);
      assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'success');
      const [row] = await exportRows(exam);
      const archive = await server.app.services.files.find(row?.file_id ?? 0);
      assert.ok(archive !== undefined);
      // Purged from the storage (a retention sweep, an operator): the record alone is no archive.
      await (await createStorage(server.app.config)).delete(archive.storageKey);
      assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'not_found');
      assertAnswer(await owner.client.v3('GET', DOWNLOAD, { id: exam }), 404, NO_ZIP);
      // A new request builds it again.
      assertAccepted(await generate(owner, exam));
      assert.equal(await runJobs(), 1);
      assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'success');
      assert.equal((await owner.client.v3('GET', DOWNLOAD, { id: exam })).status, 200);
    });

    it('an exam nobody handed anything in for gives an archive holding only the index and the manifest', async () => {
      const exam = await newExam();
      await newSession(exam, 'quiet@example.org');
      assertAccepted(await generate(admin, exam));
      assert.equal(await runJobs(), 1);
      const answer = await admin.client.v3('GET', DOWNLOAD, { id: exam });
      assert.equal(answer.status, 200, answer.text);
      const entries = await digestZip(answer.bytes);
      assert.deepEqual([...entries.keys()], ['students.csv', 'manifest.json']);
      const manifest = manifestOf(entries);
      assert.deepEqual(manifest.files, []);
      assert.deepEqual(
        manifest.students.map((student) => [student.email, student.files.length]),
        [['quiet@example.org', 0]],
      );
      assert.deepEqual(
        studentsCsvOf(entries).map((student) => [student.email, student.file_count]),
        [['quiet@example.org', '0']],
      );
    });

    it('writes students.csv escaped and safe from spreadsheet formulas, with status and times', async () => {
      const exam = await newExam();
      const actor = { id: admin.id, instituteId: home, role: 'administrator' as const };
      const names = [
        '=HYPERLINK("http://evil.example","x")',
        '+1+1',
        '-2',
        '@SUM(A1)',
        'Smith, "Jo"\nsecond line',
      ];
      const ids: number[] = [];
      for (const [index, name] of names.entries()) {
        ids.push(
          (
            await server.app.services.studentSessions.create(actor, exam, {
              name,
              email: `s${index}@example.org`,
            })
          ).id,
        );
      }
      const started = Date.parse('2026-11-21T09:00:00.000Z');
      await server.app.database.db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: started,
          end_time: started + 3_600_000,
          end_reason: 'time_up',
          archived: true,
        })
        .where('id', '=', ids[0] ?? 0)
        .execute();
      assertAccepted(await generate(admin, exam));
      assert.equal(await runJobs(), 1);
      const answer = await admin.client.v3('GET', DOWNLOAD, { id: exam });
      assert.equal(answer.status, 200, answer.text);
      const entries = await digestZip(answer.bytes);
      const text = entries.get('students.csv')?.text ?? '';
      assert.ok(
        text.startsWith(
          '\uFEFFstudent_session_id,name,email,status,archived,start_time,end_time,end_reason,file_count,folder,files\r\n',
        ),
        text,
      );
      // Quoted where needed, quotes doubled, and a formula-looking cell starts with a quote mark.
      assert.ok(
        text.includes(`${ids[0]},"'=HYPERLINK(""http://evil.example"",""x"")",s0@example.org,`),
        text,
      );
      assert.ok(text.includes('"Smith, ""Jo""\nsecond line"'), text);
      const rows = studentsCsvOf(entries);
      assert.deepEqual(
        rows.map((row) => row.name),
        ['\'=HYPERLINK("http://evil.example","x")', "'+1+1", "'-2", "'@SUM(A1)", 'Smith, "Jo"\nsecond line'],
      );
      assert.deepEqual(
        [rows[0]?.status, rows[0]?.archived, rows[0]?.start_time, rows[0]?.end_time, rows[0]?.end_reason],
        ['exam_finished', 'true', '2026-11-21T09:00:00.000Z', '2026-11-21T10:00:00.000Z', 'time_up'],
      );
      // The manifest is JSON: it holds the names as they are.
      assert.deepEqual(
        manifestOf(entries).students.map((student) => student.name),
        names,
      );
    });

    it('fails when a stored upload is missing: retried per the queue, then failure', async () => {
      const exam = await newExam();
      const session = await newSession(exam, 'lost@example.org');
      const kept = await store('kept.pdf', crypto.randomBytes(100), 'application/pdf');
      const lost = await store('lost.pdf', crypto.randomBytes(100), 'application/pdf');
      await sessionFile(session, 'upload', 1, kept);
      await sessionFile(session, 'upload', 2, lost);
      await (await createStorage(server.app.config)).delete(lost.storageKey);
      const filesBefore = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();

      assertAccepted(await generate(owner, exam));
      const reason = `file ${lost.id} ("lost.pdf") of student session ${session} is missing from storage`;
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        assert.equal(await runJobs(), 1, `attempt ${attempt} ran`);
        const [row] = await exportRows(exam);
        assert.equal(row?.status, 'failure');
        assert.equal(row?.error, reason);
        assert.equal(row?.file_id, null);
        const [job] = await zipJobs(exam);
        assert.equal(job?.attempts, attempt);
        assert.equal(job?.last_error, reason);
        if (attempt < 3) {
          assert.equal(job?.status, 'queued', 'retried after a backoff');
          assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'queued');
          assert.equal(await runJobs(), 0, 'not before its backoff');
          clock.current += 60 * 60 * 1000;
        } else {
          assert.equal(job?.status, 'failed');
        }
      }
      assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'failure');
      assertAnswer(await owner.client.v3('GET', DOWNLOAD, { id: exam }), 404, NO_ZIP);
      const filesAfter = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(filesAfter.n), Number(filesBefore.n), 'no partial archive is kept');
      // After a failure, a new request queues a new export.
      assertAccepted(await generate(owner, exam));
      assertStatus(await owner.client.v3('GET', STATUS, { id: exam }), 'queued');
      assert.equal((await exportRows(exam)).length, 2);
    });

    describe('who may call it', () => {
      const routes: Array<[string, string]> = [
        ['PUT', GENERATE],
        ['GET', STATUS],
        ['GET', DOWNLOAD],
      ];

      it('lets every manager of the exam call all three', async () => {
        const jobsBefore = (await zipJobs(examId)).length;
        for (const user of [superuser, admin, owner, comanager]) {
          assertAccepted(await generate(user, examId));
          assertStatus(await user.client.v3('GET', STATUS, { id: examId }), 'queued');
        }
        assert.equal((await zipJobs(examId)).length, jobsBefore + 1, 'the repeats while queued made one job');
        await runJobs();
        assertStatus(await owner.client.v3('GET', STATUS, { id: examId }), 'success');
        for (const user of [superuser, admin, owner, comanager]) {
          const answer = await user.client.v3('GET', DOWNLOAD, { id: examId });
          assert.equal(answer.status, 200, answer.text);
        }
      });

      it('answers 403 to the proctor, reviewer and auditor of the institute', async () => {
        const before = (await exportRows(examId)).length;
        for (const user of [proctor, reviewer, auditor]) {
          for (const [method, path] of routes) {
            assertAnswer(await user.client.v3(method, path, { id: examId }), 403, NOT_AUTHORIZED);
          }
        }
        assert.equal((await exportRows(examId)).length, before, 'nothing was queued');
      });

      it('answers 404 as for a missing exam to a teacher who does not manage it and to another institute', async () => {
        for (const user of [otherTeacher, outsideAdmin]) {
          for (const [method, path] of routes) {
            assertAnswer(await user.client.v3(method, path, { id: examId }), 404, notFound('Exam', examId));
          }
        }
        for (const [method, path] of routes) {
          assertAnswer(
            await owner.client.v3(method, path, { id: 987654321 }),
            404,
            notFound('Exam', 987654321),
          );
          assertAnswer(await owner.client.v3(method, path, { id: 'abc' }), 404, notFound('Exam', 'abc'));
        }
      });

      it('answers 404 for a deleted exam', async () => {
        const exam = await newExam();
        assert.equal((await owner.client.v3('DELETE', '/exams/:id', { id: exam })).status, 200);
        for (const [method, path] of routes) {
          assertAnswer(await owner.client.v3(method, path, { id: exam }), 404, notFound('Exam', exam));
        }
      });
    });
  });
}
