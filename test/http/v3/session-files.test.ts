import { instituteOfSession } from '../../../src/domain/data-keys/data-keys.repository.ts';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import { insertSessionFile } from '../../../src/domain/room/room.repository.ts';
import {
  SESSION_FILE_KINDS,
  type SessionFileKind,
} from '../../../src/domain/student-sessions/session-file.ts';
import { assertPresignedAddress, fetchAddress, onS3 } from '../../helpers/files.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const INVALID_KIND = {
  error: "'kind':['is not included in the list']",
  errors: { kind: ['is not included in the list'] },
};
const ENTRY_FIELDS = [
  'kind',
  'sequence',
  'file_name',
  'content_type',
  'file_size',
  'created_at',
  'url',
  'expires_at',
];
const FIVE_MINUTES_SECONDS = 300;

/** Bytes of a webcam or screen recording chunk (stored as the room stores later chunks: as they are). */
function chunk(): Buffer {
  return crypto.randomBytes(1500);
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

/** The `files` of a 200 answer, each checked to carry exactly the listing's fields, in order. */
function filesIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['files']);
  assert.ok(Array.isArray(body.files), 'files is an array');
  return body.files.map((item) => {
    const entry = object(item, 'file');
    assert.deepEqual(Object.keys(entry), ENTRY_FIELDS);
    return entry;
  });
}

/** The entries without their addresses (which are signed afresh by every call). */
function withoutAddresses(entries: readonly Json[]): Json[] {
  return entries.map(({ url: _url, expires_at: _expiresAt, ...rest }) => rest);
}

/** A file of a session as stored, with what the listing must say of it. */
interface Stored {
  readonly kind: SessionFileKind;
  readonly sequence: number;
  readonly file: StoredFile;
  readonly bytes: Buffer;
  readonly createdAt: number;
}

function entryOf(stored: Stored): Json {
  return {
    kind: stored.kind,
    sequence: stored.sequence,
    file_name: stored.file.originalName,
    content_type: stored.file.contentType,
    file_size: stored.bytes.length,
    created_at: new Date(stored.createdAt).toISOString(),
  };
}

for (const dialect of DIALECTS) {
  describe(`V3 student-session files [${dialect}]`, () => {
    // Whole seconds near the real time: S3 judges a presigned address's expiry by its own clock.
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let superuser: TestUser;
    let admin: TestUser;
    let owner: TestUser;
    let coTeacher: TestUser;
    let otherTeacher: TestUser;
    let proctor: TestUser;
    let assignedProctor: TestUser;
    let globalProctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsideAdmin: TestUser;
    let outsideTeacher: TestUser;
    let examId: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const home = await server.institute();
      const elsewhere = await server.institute();
      superuser = await server.user(elsewhere, 'superuser');
      admin = await server.user(home, 'administrator');
      owner = await server.user(home, 'teacher');
      coTeacher = await server.user(home, 'teacher');
      otherTeacher = await server.user(home, 'teacher');
      proctor = await server.user(home, 'proctor');
      assignedProctor = await server.user(home, 'proctor');
      globalProctor = await server.user(home, 'global_proctor');
      reviewer = await server.user(home, 'reviewer');
      auditor = await server.user(home, 'auditor');
      outsideAdmin = await server.user(elsewhere, 'administrator');
      outsideTeacher = await server.user(elsewhere, 'teacher');
      examId = await createExam('Exam with recordings');
      const comanager = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id: examId,
        comanager_id: coTeacher.id,
      });
      assert.equal(comanager.status, 200, comanager.text);
    });

    after(async () => {
      await server.close();
    });

    async function createExam(name: string): Promise<number> {
      const exam = await owner.client.v3('POST', '/exams', {
        name,
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      return object(object(exam.json, 'body').exam, 'exam').id as number;
    }

    let students = 0;
    async function createStudent(exam = examId): Promise<number> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Student ${students}`,
        email: `files-student${students}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student').id as number;
    }

    /**
     * Stores `bytes` as the session's file of `kind` at `sequence` the way the candidate room does:
     * a stored file, then its `session_files` row. Returns what the listing must show.
     */
    async function store(
      sessionId: number,
      kind: SessionFileKind,
      sequence: number,
      bytes: Buffer,
      meta: { fileName: string; contentType: string },
    ): Promise<Stored> {
      // A millisecond apart, so each row has its own created_at.
      clock.current += 1;
      const file = await server.app.services.files.keepStream(Readable.from([bytes]), {
        instituteId: (await instituteOfSession(server.app.database.db, sessionId)) ?? 0,
        originalName: meta.fileName,
        contentType: meta.contentType,
      });
      const createdAt = clock.now();
      const inserted = await insertSessionFile(server.app.database.db, {
        sessionId,
        kind,
        fileId: file.id,
        sequence,
        now: createdAt,
      });
      assert.ok(inserted, `${kind} ${sequence} stored`);
      return { kind, sequence, file, bytes, createdAt };
    }

    /** A webcam, screen or phone recording chunk, named as the room and the phone name every chunk. */
    function recording(
      sessionId: number,
      kind: 'recording' | 'screen_recording' | 'mobile_recording',
      sequence: number,
    ): Promise<Stored> {
      const source = { recording: 'webcam', screen_recording: 'screen', mobile_recording: 'mobile' }[kind];
      return store(sessionId, kind, sequence, chunk(), {
        fileName: `${source}-${sequence}.webm`,
        contentType: 'video/webm',
      });
    }

    /**
     * A session holding two uploads, three webcam chunks, two screen chunks and one phone chunk,
     * stored out of order.
     */
    async function sessionWithFiles(): Promise<{ id: number; stored: Stored[] }> {
      const id = await createStudent();
      const stored = [
        await recording(id, 'recording', 0),
        await recording(id, 'screen_recording', 0),
        await store(id, 'upload', 0, SAMPLE.pdf, {
          fileName: 'Lösung Aufgabe 1.pdf',
          contentType: 'application/pdf',
        }),
        await recording(id, 'recording', 1),
        await recording(id, 'screen_recording', 1),
        await store(id, 'upload', 1, SAMPLE.png, { fileName: 'sketch.png', contentType: 'image/png' }),
        await recording(id, 'mobile_recording', 0),
        await recording(id, 'recording', 2),
      ];
      return { id, stored };
    }

    /** The stored files in the listing's order: by kind (SESSION_FILE_KINDS), then sequence. */
    function inListingOrder(stored: readonly Stored[]): Stored[] {
      return [...stored].sort(
        (a, b) =>
          SESSION_FILE_KINDS.indexOf(a.kind) - SESSION_FILE_KINDS.indexOf(b.kind) || a.sequence - b.sequence,
      );
    }

    function list(user: TestUser, id: Scalar, params: Record<string, Scalar> = {}): Promise<HttpAnswer> {
      return user.client.v3('GET', '/student_sessions/:id/files', { id, ...params });
    }

    describe('GET /api/v3/student_sessions/:id/files', () => {
      it('answers 200 {"files": []} for a session the room stored nothing for', async () => {
        const id = await createStudent();
        assertAnswer(await list(owner, id), 200, { files: [] });
      });

      it('lists every file ordered by kind (upload, recording, screen_recording, mobile_recording), then sequence, whatever the order they were stored in', async () => {
        const { id, stored } = await sessionWithFiles();
        const other = await createStudent();
        await recording(other, 'recording', 0);
        await store(other, 'upload', 0, SAMPLE.png, { fileName: 'other.png', contentType: 'image/png' });

        const entries = filesIn(await list(owner, id));
        assert.deepEqual(withoutAddresses(entries), inListingOrder(stored).map(entryOf));
        assert.deepEqual(
          entries.map((entry) => `${String(entry.kind)} ${String(entry.sequence)}`),
          [
            'upload 0',
            'upload 1',
            'recording 0',
            'recording 1',
            'recording 2',
            'screen_recording 0',
            'screen_recording 1',
            'mobile_recording 0',
          ],
        );
      });

      it('gives each file an address valid five minutes that downloads it byte for byte', async () => {
        const { id, stored } = await sessionWithFiles();
        const signedAt = clock.now();
        const entries = filesIn(await list(owner, id));
        const expiresAt = (Math.floor(signedAt / 1000) + FIVE_MINUTES_SECONDS) * 1000;
        for (const [index, expected] of inListingOrder(stored).entries()) {
          const entry = entries[index];
          assert.ok(entry !== undefined, `entry ${index}`);
          assert.equal(entry.expires_at, new Date(expiresAt).toISOString());
          const url = String(entry.url);
          if (onS3(server)) {
            assertPresignedAddress(server, url, {
              file: expected.file,
              seconds: FIVE_MINUTES_SECONDS,
              signedAt,
            });
          } else {
            const address = new URL(url);
            assert.equal(address.origin, server.app.config.publicUrl);
            assert.equal(address.pathname, `/files/${expected.file.id}`);
            assert.equal(address.searchParams.get('expires'), String(expiresAt / 1000));
          }
          const download = await fetchAddress(server, url);
          assert.equal(download.status, 200, download.text);
          assert.ok(
            download.bytes.equals(expected.bytes),
            `${expected.kind} ${expected.sequence}: the same bytes`,
          );
          assert.equal(download.headers['content-type'], expected.file.contentType);
        }
        const upload = entries[0];
        assert.equal(
          (await fetchAddress(server, String(upload?.url))).headers['content-disposition'],
          `attachment; filename="L_sung Aufgabe 1.pdf"; filename*=UTF-8''L%C3%B6sung%20Aufgabe%201.pdf`,
        );
      });

      it('limits the list to one kind with `kind`, in sequence order', async () => {
        const { id, stored } = await sessionWithFiles();
        for (const kind of SESSION_FILE_KINDS) {
          const entries = filesIn(await list(owner, id, { kind }));
          const expected = inListingOrder(stored.filter((file) => file.kind === kind));
          assert.ok(expected.length > 0, `the fixture has ${kind} files`);
          assert.deepEqual(withoutAddresses(entries), expected.map(entryOf), kind);
        }
        const onlyRecorded = await createStudent();
        await recording(onlyRecorded, 'recording', 0);
        assertAnswer(await list(owner, onlyRecorded, { kind: 'upload' }), 200, { files: [] });
        assertAnswer(await list(owner, onlyRecorded, { kind: 'screen_recording' }), 200, { files: [] });
      });

      it("answers 422 'kind':['is not included in the list'] for any other kind", async () => {
        const { id } = await sessionWithFiles();
        for (const kind of ['photo', 'face_photo', 'Upload', 'recordings', 'upload ', '']) {
          assertAnswer(await list(owner, id, { kind }), 422, INVALID_KIND);
        }
      });

      it('lets whoever may read the session list it: staff of the exam and of its institute, and any proctor of the institute, assigned to the session or not', async () => {
        const { id } = await sessionWithFiles();
        const assigned = await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
          id,
          proctor_id: assignedProctor.id,
        });
        assert.equal(assigned.status, 200, assigned.text);
        const expected = withoutAddresses(filesIn(await list(owner, id)));
        for (const user of [
          coTeacher,
          admin,
          superuser,
          proctor,
          assignedProctor,
          globalProctor,
          reviewer,
          auditor,
        ]) {
          const entries = filesIn(await list(user, id));
          assert.deepEqual(withoutAddresses(entries), expected);
          const download = await fetchAddress(server, String(entries[0]?.url));
          assert.equal(download.status, 200, download.text);
          assert.ok(download.bytes.equals(SAMPLE.pdf), 'the same bytes');
        }
      });

      it("answers 404 Couldn't find Student Session to callers who cannot see it, whatever the kind, and for unknown ids", async () => {
        const { id } = await sessionWithFiles();
        for (const user of [otherTeacher, outsideAdmin, outsideTeacher]) {
          assertAnswer(await list(user, id), 404, notFound('Student Session', id));
          assertAnswer(await list(user, id, { kind: 'recording' }), 404, notFound('Student Session', id));
          assertAnswer(await list(user, id, { kind: 'not-a-kind' }), 404, notFound('Student Session', id));
        }
        for (const unknown of [2_000_000_000, 'abc', 0]) {
          assertAnswer(await list(owner, unknown), 404, notFound('Student Session', unknown));
        }
      });

      it("answers 404 Couldn't find Student Session for a session of a deleted exam", async () => {
        const exam = await createExam('Exam to delete');
        const id = await createStudent(exam);
        await recording(id, 'recording', 0);
        assert.equal(filesIn(await list(owner, id)).length, 1);
        const deleted = await owner.client.v3('DELETE', '/exams/:id', { id: exam });
        assert.equal(deleted.status, 200, deleted.text);
        for (const user of [owner, admin, superuser]) {
          assertAnswer(await list(user, id), 404, notFound('Student Session', id));
        }
      });

      it('answers 403 to an unsigned request and a bad signature', async () => {
        const { id } = await sessionWithFiles();
        const route = '/student_sessions/:id/files';
        assertAnswer(await owner.client.v3('GET', route, { id }, { unsigned: true }), 403, NOT_AUTHORIZED);
        assertAnswer(
          await owner.client.v3('GET', route, { id }, { signature: '0'.repeat(64) }),
          403,
          NOT_AUTHORIZED,
        );
      });
    });
  });
}
