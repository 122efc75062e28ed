import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import pino from 'pino';
import yauzl from 'yauzl';
import type { Actor } from '../../../src/domain/access.ts';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import type { PhotoKind } from '../../../src/domain/student-sessions/photos.service.ts';
import { createWorker } from '../../../src/jobs/worker.ts';
import { invalid } from '../../helpers/answers.ts';
import { SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { assertMatchesManifest, digestZip, manifestOf, studentsCsvOf } from '../../helpers/zip-archive.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const GENERATE = '/exams/:id/generate_exam_documents_zip';
const STATUS = '/exams/:id/status_exam_documents_zip';
const DOWNLOAD = '/exams/:id/download_exam_documents_zip';
const silent = pino({ level: 'silent' });

/** A frame header pdf-lib embeds as a 1×1 JPEG (see test/http/v3/reports.test.ts). */
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x01, 0x00, 0x01, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01,
  0x03, 0x11, 0x01, 0xff, 0xd9,
]);

/** The bytes of one entry of a zip, read with yauzl. */
async function entryBytes(zipBytes: Buffer, name: string): Promise<Buffer> {
  const zip = await yauzl.fromBufferPromise(zipBytes, { lazyEntries: true, validateEntrySizes: true });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== name) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }
  } finally {
    zip.close();
  }
  throw new Error(`no entry ${name}`);
}

for (const dialect of DIALECTS) {
  describe(`PUT /api/v3/exams/:id/generate_exam_documents_zip with include [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let owner: TestUser;
    let uploadDir: string;
    let examId: number;
    let ada: { id: number; email: string };
    let idle: { id: number; email: string };
    let answers: StoredFile;
    let recording: { file: StoredFile; bytes: Buffer };

    const ownerActor = (): Actor => ({ id: owner.id, instituteId: home, role: 'teacher' });

    async function runJobs(): Promise<void> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: silent,
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce()) {
        // one job at a time, as `invigil worker` does
      }
    }

    async function attach(
      sessionId: number,
      kind: PhotoKind,
      bytes: Buffer,
      fileName: string,
    ): Promise<void> {
      const file = path.join(uploadDir, crypto.randomBytes(8).toString('hex'));
      fs.writeFileSync(file, bytes);
      await server.app.services.photos.attachPhoto(sessionId, kind, {
        field: 'photo',
        fileName,
        declaredType: 'application/octet-stream',
        path: file,
        size: bytes.length,
        head: bytes.subarray(0, 64),
      });
    }

    /** Generates with `include`, runs the job, and downloads the archive. Returns its bytes. */
    async function archiveWith(include: string | undefined): Promise<Buffer> {
      const generated = await owner.client.v3('PUT', GENERATE, {
        id: examId,
        ...(include === undefined ? {} : { include }),
      });
      assert.equal(generated.status, 202, generated.text);
      await runJobs();
      const status = await owner.client.v3('GET', STATUS, { id: examId });
      assert.deepEqual(status.json, { zip_job_status: 'success' });
      const download = await owner.client.v3('GET', DOWNLOAD, { id: examId });
      assert.equal(download.status, 200, download.text);
      return download.bytes;
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      uploadDir = fs.mkdtempSync(path.join(server.database.dataDir, 'uploads-'));
      home = await server.institute();
      owner = await server.user(home, 'teacher');
      examId = (
        await server.app.services.exams.create(ownerActor(), {
          name: 'Evidence exam',
          type: 'record_review',
          duration_minutes: 60,
        })
      ).id;
      const create = async (email: string, name: string) => ({
        id: (await server.app.services.studentSessions.create(ownerActor(), examId, { name, email })).id,
        email,
      });
      ada = await create('ada@example.org', 'Zoë Łukasiewicz 王');
      idle = await create('idle@example.org', 'Idle');
      answers = await server.app.services.files.keepStream(Readable.from([SAMPLE.pdf]), {
        instituteId: home,
        originalName: 'report.pdf',
        contentType: 'application/pdf',
      });
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ exam_document_file_id: answers.id, start_time: clock.now(), end_time: clock.now() + 60_000 })
        .where('id', '=', ada.id)
        .execute();
      await attach(ada.id, 'id_card', SAMPLE.png, 'scan.png');
      await attach(ada.id, 'face_photo', JPEG, 'me.jpg');
      await server.app.services.studentSessions.addIncident(ownerActor(), ada.id, {
        comment: 'Left the room',
        offset_time: 12,
      });
      // A finalised webcam recording and a screen recording still processing (left out).
      const bytes = crypto.randomBytes(50_000);
      const file = await server.app.services.files.keepStream(Readable.from([bytes]), {
        originalName: `session-${ada.id}-webcam.webm`,
        instituteId: home,

        contentType: 'video/webm',
      });
      recording = { file, bytes };
      const now = clock.now();
      await server.app.database.db
        .insertInto('recordings')
        .values([
          {
            student_session_id: ada.id,
            source: 'webcam',
            status: 'completed',
            started_at: now,
            duration_seconds: 60,
            file_id: file.id,
            storage_key: file.storageKey,
            size: file.size,
            created_at: now,
            updated_at: now,
          },
          {
            student_session_id: ada.id,
            source: 'screen',
            status: 'processing',
            created_at: now,
            updated_at: now,
          },
        ])
        .execute();
    });
    after(() => server.close());

    it('adds each session’s photos, finalised recordings and report, listed in the manifest', async () => {
      const zip = await archiveWith('recordings,photos,reports');
      const entries = await digestZip(zip);
      const folder = `${ada.id}-ada@example.org`;
      const idleFolder = `${idle.id}-idle@example.org`;
      assert.deepEqual(
        [...entries.keys()],
        [
          `${folder}/report.pdf`,
          `${folder}/id-card.png`,
          `${folder}/face-photo.jpg`,
          `${folder}/recording-webcam.webm`,
          // The report's own name is taken by the handed-in file: it becomes "report (2).pdf".
          `${folder}/report (2).pdf`,
          `${idleFolder}/report.pdf`,
          'students.csv',
          'manifest.json',
        ],
      );
      const manifest = manifestOf(entries);
      const listed = assertMatchesManifest(entries, manifest);
      assert.deepEqual(
        [...listed.values()].map((file) => file.kind),
        ['exam_document', 'id_card', 'face_photo', 'recording', 'report', 'report'],
      );
      assert.equal(
        listed.get(`${folder}/id-card.png`)?.sha256,
        crypto.createHash('sha256').update(SAMPLE.png).digest('hex'),
      );
      assert.equal(listed.get(`${folder}/face-photo.jpg`)?.size, JPEG.length);
      assert.equal(
        listed.get(`${folder}/recording-webcam.webm`)?.sha256,
        crypto.createHash('sha256').update(recording.bytes).digest('hex'),
      );
      assert.equal(manifest.file_count, 6);
      const csv = studentsCsvOf(entries);
      assert.equal(csv[1]?.folder, idleFolder);
      assert.equal(csv[1]?.file_count, '1');

      const pdf = await PDFDocument.load(await entryBytes(zip, `${folder}/report (2).pdf`));
      assert.ok(pdf.getPageCount() >= 1);
      assert.equal(pdf.getTitle(), `Student session ${ada.id} report`);
      const idlePdf = await PDFDocument.load(await entryBytes(zip, `${idleFolder}/report.pdf`));
      assert.equal(idlePdf.getTitle(), `Student session ${idle.id} report`);
    });

    it('adds only what is asked for: photos alone', async () => {
      const entries = await digestZip(await archiveWith('photos'));
      const folder = `${ada.id}-ada@example.org`;
      assert.deepEqual(
        [...entries.keys()],
        [
          `${folder}/report.pdf`,
          `${folder}/id-card.png`,
          `${folder}/face-photo.jpg`,
          'students.csv',
          'manifest.json',
        ],
      );
    });

    it('keeps the archive as before without include, and with an empty one', async () => {
      for (const include of [undefined, '']) {
        const entries = await digestZip(await archiveWith(include));
        assert.deepEqual(
          [...entries.keys()],
          [`${ada.id}-ada@example.org/report.pdf`, 'students.csv', 'manifest.json'],
        );
      }
      const job = await server.app.database.db
        .selectFrom('jobs')
        .select('payload')
        .where('kind', '=', 'exam_zip')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.deepEqual(typeof job.payload === 'string' ? JSON.parse(job.payload) : job.payload, { examId });
    });

    it('answers 422 naming include for an unknown value, and queues nothing', async () => {
      const before = await server.app.database.db
        .selectFrom('exam_zip_exports')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      for (const include of ['videos', 'photos,passwords', 'photos,', ' ']) {
        const answer = await owner.client.v3('PUT', GENERATE, { id: examId, include });
        assert.equal(answer.status, 422, `${include}: ${answer.text}`);
        assert.deepEqual(answer.json, invalid('include', 'is not included in the list'));
      }
      const afterwards = await server.app.database.db
        .selectFrom('exam_zip_exports')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(afterwards.count), Number(before.count));
    });
  });
}
