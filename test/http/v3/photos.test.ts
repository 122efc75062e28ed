import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NotFound, ParamMissing, UnsupportedMediaType } from '../../../src/domain/errors.ts';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import type { PhotoKind } from '../../../src/domain/student-sessions/photos.service.ts';
import type { Upload } from '../../../src/storage/upload.ts';
import { StorageMissing } from '../../../src/storage/storage.ts';
import { S3_STORAGE } from '../../helpers/files.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const NO_FACE_PHOTO = { error: "Couldn't find the face photo" };
const FIVE_MINUTES = 300_000;

/** A JPEG as the server recognises one (its first bytes), with random content after them. */
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), crypto.randomBytes(2000)]);

const PHOTO_FIELDS: Record<PhotoKind, readonly string[]> = {
  id_card: ['id_card_file_name', 'id_card_content_type', 'id_card_file_size'],
  face_photo: ['face_photo_file_name', 'face_photo_content_type', 'face_photo_file_size'],
};
const KINDS: readonly PhotoKind[] = ['id_card', 'face_photo'];

function studentIn(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student']);
  return object(body.student, 'student');
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

for (const dialect of DIALECTS) {
  describe(`V3 student-session photos [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let onS3: boolean;
    let uploadDir: string;
    let superuser: TestUser;
    let admin: TestUser;
    let owner: TestUser;
    let coTeacher: TestUser;
    let otherTeacher: TestUser;
    let proctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsideAdmin: TestUser;
    let outsideTeacher: TestUser;
    let examId: number;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      // Presigned S3 addresses only where the storage gives them (never since encryption at rest).
      onS3 = server.app.config.storage.kind === 's3' && server.app.services.files.presigns;
      uploadDir = fs.mkdtempSync(path.join(server.database.dataDir, 'uploads-'));
      const home = await server.institute();
      const elsewhere = await server.institute();
      superuser = await server.user(elsewhere, 'superuser');
      admin = await server.user(home, 'administrator');
      owner = await server.user(home, 'teacher');
      coTeacher = await server.user(home, 'teacher');
      otherTeacher = await server.user(home, 'teacher');
      proctor = await server.user(home, 'proctor');
      reviewer = await server.user(home, 'reviewer');
      auditor = await server.user(home, 'auditor');
      outsideAdmin = await server.user(elsewhere, 'administrator');
      outsideTeacher = await server.user(elsewhere, 'teacher');
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Exam with photos',
        type: 'live_proctoring',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const comanager = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id: examId,
        comanager_id: coTeacher.id,
      });
      assert.equal(comanager.status, 200, comanager.text);
    });

    after(async () => {
      await server.close();
    });

    let students = 0;
    async function createStudent(): Promise<number> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Student ${students}`,
        email: `photo-student${students}@example.org`,
      });
      return studentIn(answer, 201).id as number;
    }

    /** An upload as the multipart reader leaves it: a temporary file with its first bytes. */
    function uploadOf(bytes: Buffer, fileName: string, field = 'photo'): Upload {
      const file = path.join(uploadDir, crypto.randomBytes(8).toString('hex'));
      fs.writeFileSync(file, bytes);
      return {
        field,
        fileName,
        declaredType: 'application/octet-stream',
        path: file,
        size: bytes.length,
        head: bytes.subarray(0, 64),
      };
    }

    /** Puts a photo in place the way the candidate room will. Returns its stored file record. */
    async function attach(
      sessionId: number,
      kind: PhotoKind,
      bytes: Buffer,
      fileName: string,
    ): Promise<StoredFile> {
      await server.app.services.photos.attachPhoto(sessionId, kind, uploadOf(bytes, fileName));
      const file = await server.app.services.files.find((await photoFileIds(sessionId))[kind] ?? 0);
      assert.ok(file !== undefined, 'the photo has a file record');
      return file;
    }

    async function photoFileIds(sessionId: number): Promise<Record<PhotoKind, number | null>> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select(['id_card_file_id', 'face_photo_file_id'])
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      return { id_card: row.id_card_file_id, face_photo: row.face_photo_file_id };
    }

    /** Asserts the file record and its stored bytes are gone. */
    async function assertRemoved(file: StoredFile): Promise<void> {
      assert.equal(await server.app.services.files.find(file.id), undefined, 'no file record');
      await assert.rejects(server.app.services.files.open(file), StorageMissing, 'no stored object');
    }

    /** Asserts the file record and its bytes are still there. */
    async function assertKept(file: StoredFile, bytes: Buffer): Promise<void> {
      assert.deepEqual(await server.app.services.files.find(file.id), file);
      const stream = await server.app.services.files.open(file);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      assert.ok(Buffer.concat(chunks).equals(bytes), 'the stored bytes are unchanged');
    }

    function show(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('GET', '/student_sessions/:id', { id });
    }

    function destroyPhoto(user: TestUser, id: Scalar, kind: PhotoKind): Promise<HttpAnswer> {
      return user.client.v3('DELETE', `/student_sessions/:id/${kind}`, { id });
    }

    function facePhoto(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('GET', '/student_sessions/:id/face_photo', { id });
    }

    /**
     * Fetches an expiring address. A `/files/...` address names PUBLIC_URL, which is this test
     * server; an S3 presigned address is fetched where it points.
     */
    function fetchAddress(url: string): Promise<HttpAnswer> {
      if (onS3) return httpRequest({ url });
      const address = new URL(url);
      return httpRequest({ url: `${server.baseUrl}${address.pathname}${address.search}` });
    }

    for (const kind of KINDS) {
      const other: PhotoKind = kind === 'id_card' ? 'face_photo' : 'id_card';

      describe(`DELETE /api/v3/student_sessions/:id/${kind}`, () => {
        it(`answers 200 with the student record, the ${kind} fields nulled, and removes its stored file`, async () => {
          const id = await createStudent();
          const photo = await attach(id, kind, SAMPLE.png, 'Foto Müller.png');
          const kept = await attach(id, other, JPEG, 'other.jpg');
          const before = studentIn(await show(owner, id));
          const [nameField, typeField, sizeField] = PHOTO_FIELDS[kind];
          assert.deepEqual(
            [before[nameField ?? ''], before[typeField ?? ''], before[sizeField ?? '']],
            ['Foto Müller.png', 'image/png', SAMPLE.png.length],
          );
          clock.current += 1000;

          const student = studentIn(await destroyPhoto(owner, id, kind));
          const expected: Json = { ...before, updated_at: new Date(clock.now()).toISOString() };
          for (const field of PHOTO_FIELDS[kind]) expected[field] = null;
          assert.deepEqual(student, expected);
          assert.deepEqual(studentIn(await show(owner, id)), expected, 'a later show reads the same');
          assert.equal((await photoFileIds(id))[kind], null);
          await assertRemoved(photo);
          await assertKept(kept, JPEG);
          assert.equal((await photoFileIds(id))[other], kept.id, `the ${other} stays`);
        });

        it(`is harmless on a session without a ${kind}: 200 with the record unchanged`, async () => {
          const id = await createStudent();
          const before = studentIn(await show(owner, id));
          clock.current += 1000;
          assert.deepEqual(studentIn(await destroyPhoto(owner, id, kind)), before);
          assert.deepEqual(studentIn(await destroyPhoto(owner, id, kind)), before, 'and again');
        });

        it('lets a co-manager, an administrator of the institute and a superuser destroy it', async () => {
          for (const user of [coTeacher, admin, superuser]) {
            const id = await createStudent();
            const photo = await attach(id, kind, SAMPLE.png, 'p.png');
            const student = studentIn(await destroyPhoto(user, id, kind));
            for (const field of PHOTO_FIELDS[kind]) assert.equal(student[field], null, field);
            await assertRemoved(photo);
          }
        });

        it('answers 403 to an auditor, a proctor and a reviewer of the institute, keeping the photo', async () => {
          const id = await createStudent();
          const photo = await attach(id, kind, SAMPLE.png, 'p.png');
          for (const user of [auditor, proctor, reviewer]) {
            assertAnswer(await destroyPhoto(user, id, kind), 403, NOT_AUTHORIZED);
          }
          await assertKept(photo, SAMPLE.png);
          assert.equal((await photoFileIds(id))[kind], photo.id);
        });

        it("answers 404 Couldn't find Student Session to callers who cannot see the session, keeping the photo", async () => {
          const id = await createStudent();
          const photo = await attach(id, kind, SAMPLE.png, 'p.png');
          for (const user of [otherTeacher, outsideAdmin, outsideTeacher]) {
            assertAnswer(await destroyPhoto(user, id, kind), 404, notFound('Student Session', id));
          }
          await assertKept(photo, SAMPLE.png);
        });

        it("answers 404 Couldn't find Student Session for an unknown or malformed id, as sent", async () => {
          for (const id of [2_000_000_000, 'abc']) {
            assertAnswer(await destroyPhoto(owner, id, kind), 404, notFound('Student Session', id));
          }
        });

        it('answers 403 to an unsigned request and a bad signature, keeping the photo', async () => {
          const id = await createStudent();
          const photo = await attach(id, kind, SAMPLE.png, 'p.png');
          const route = `/student_sessions/:id/${kind}`;
          assertAnswer(
            await owner.client.v3('DELETE', route, { id }, { unsigned: true }),
            403,
            NOT_AUTHORIZED,
          );
          assertAnswer(
            await owner.client.v3('DELETE', route, { id }, { signature: '0'.repeat(64) }),
            403,
            NOT_AUTHORIZED,
          );
          await assertKept(photo, SAMPLE.png);
        });
      });
    }

    describe('GET /api/v3/student_sessions/:id/id_card', () => {
      it('answers an address valid five minutes that downloads the ID card photo byte for byte', async () => {
        const id = await createStudent();
        await attach(id, 'id_card', SAMPLE.png, 'card.png');
        const answer = await owner.client.v3('GET', '/student_sessions/:id/id_card', { id });
        assert.equal(answer.status, 200, answer.text);
        const body = object(answer.json, 'body');
        assert.deepEqual(Object.keys(body), ['url', 'expires_at']);
        assert.equal(body.expires_at, new Date(clock.now() + FIVE_MINUTES).toISOString());
        const download = await fetchAddress(String(body.url));
        assert.equal(download.status, 200, download.text);
        assert.ok(download.bytes.equals(SAMPLE.png), 'the same bytes');
      });

      it("answers 404 `Couldn't find the ID card` for a session with only a face photo", async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', SAMPLE.png, 'face.png');
        const answer = await owner.client.v3('GET', '/student_sessions/:id/id_card', { id });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, { error: "Couldn't find the ID card" });
      });
    });

    describe('GET /api/v3/student_sessions/:id/face_photo', () => {
      it('answers 200 with {url, expires_at}: an address valid five minutes that downloads the photo byte for byte', async () => {
        const id = await createStudent();
        const photo = await attach(id, 'face_photo', SAMPLE.png, 'Gesicht Jürgen.png');
        const answer = await facePhoto(owner, id);
        assert.equal(answer.status, 200, answer.text);
        const body = object(answer.json, 'body');
        assert.deepEqual(Object.keys(body), ['url', 'expires_at']);
        assert.equal(body.expires_at, new Date(clock.now() + FIVE_MINUTES).toISOString());
        const url = new URL(String(body.url));
        if (onS3) {
          assert.equal(url.searchParams.get('X-Amz-Expires'), '300');
          assert.equal(url.pathname.endsWith(`/${photo.storageKey}`), true, 'the presigned object');
        } else {
          assert.equal(url.origin, PUBLIC_URL);
          assert.equal(url.pathname, `/files/${photo.id}`);
          assert.equal(url.searchParams.get('expires'), String(Math.floor(clock.now() / 1000) + 300));
        }
        const download = await fetchAddress(String(body.url));
        assert.equal(download.status, 200, download.text);
        assert.ok(download.bytes.equals(SAMPLE.png), 'the same bytes');
        assert.equal(download.headers['content-type'], 'image/png');
        assert.equal(
          download.headers['content-disposition'],
          `attachment; filename="Gesicht J_rgen.png"; filename*=UTF-8''Gesicht%20J%C3%BCrgen.png`,
        );
      });

      it('gives an address that works until five minutes have passed, and is refused (403) after', async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', JPEG, 'face.jpg');
        const start = clock.now();
        if (onS3) {
          // S3 judges the expiry by its own clock: sign as if asked 290 s and 301 s ago.
          const realNow = Math.floor(Date.now() / 1000) * 1000;
          clock.current = realNow - 290_000;
          const recent = object((await facePhoto(owner, id)).json, 'body');
          assert.equal((await fetchAddress(String(recent.url))).status, 200, 'valid within the five minutes');
          clock.current = realNow - FIVE_MINUTES - 1000;
          const old = object((await facePhoto(owner, id)).json, 'body');
          assert.equal(old.expires_at, new Date(clock.now() + FIVE_MINUTES).toISOString());
          assert.equal((await fetchAddress(String(old.url))).status, 403, 'refused once expired');
          clock.current = start;
          return;
        }
        const body = object((await facePhoto(owner, id)).json, 'body');
        clock.current += FIVE_MINUTES;
        const within = await fetchAddress(String(body.url));
        assert.equal(within.status, 200, 'valid at exactly five minutes');
        assert.ok(within.bytes.equals(JPEG));
        clock.current += 1000;
        assertAnswer(await fetchAddress(String(body.url)), 403, NOT_AUTHORIZED);
        const fresh = object((await facePhoto(owner, id)).json, 'body');
        assert.notEqual(fresh.url, body.url);
        assert.equal((await fetchAddress(String(fresh.url))).status, 200, 'a fresh address works');
      });

      // s3rver accepts any SigV4 signature (it checks key id and expiry only; AWS and MinIO verify it),
      // so an altered address can only be refused on local storage.
      if (!S3_STORAGE) {
        it('gives an address refused (403) once altered', async () => {
          const id = await createStudent();
          await attach(id, 'face_photo', SAMPLE.png, 'face.png');
          const otherId = await createStudent();
          const otherPhoto = await attach(otherId, 'face_photo', JPEG, 'other.jpg');
          const url = new URL(String(object((await facePhoto(owner, id)).json, 'body').url));
          const expires = url.searchParams.get('expires') ?? '';
          const signature = url.searchParams.get('signature') ?? '';
          const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
          for (const altered of [
            `${url.origin}${url.pathname}?expires=${expires}&signature=${flipped}`,
            `${url.origin}${url.pathname}?expires=${Number(expires) + 3600}&signature=${signature}`,
            `${url.origin}/files/${otherPhoto.id}?expires=${expires}&signature=${signature}`,
            `${url.origin}${url.pathname}?expires=${expires}`,
          ]) {
            assertAnswer(await fetchAddress(altered), 403, NOT_AUTHORIZED);
          }
          assert.equal((await fetchAddress(url.toString())).status, 200, 'the address as given still works');
        });
      }

      it("answers 404 Couldn't find the face photo for a session without one, even with an ID photo", async () => {
        const id = await createStudent();
        assertAnswer(await facePhoto(owner, id), 404, NO_FACE_PHOTO);
        await attach(id, 'id_card', SAMPLE.png, 'card.png');
        assertAnswer(await facePhoto(owner, id), 404, NO_FACE_PHOTO);
      });

      it("answers 404 Couldn't find the face photo once it is destroyed, and its old address finds nothing", async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', SAMPLE.png, 'face.png');
        const body = object((await facePhoto(owner, id)).json, 'body');
        studentIn(await destroyPhoto(owner, id, 'face_photo'));
        assertAnswer(await facePhoto(owner, id), 404, NO_FACE_PHOTO);
        assert.equal((await fetchAddress(String(body.url))).status, 404);
      });

      it('lets whoever may read the session have the address: staff of the exam and of its institute', async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', SAMPLE.png, 'face.png');
        for (const user of [owner, coTeacher, admin, superuser, auditor, proctor, reviewer]) {
          const answer = await facePhoto(user, id);
          assert.equal(answer.status, 200, answer.text);
          const download = await fetchAddress(String(object(answer.json, 'body').url));
          assert.ok(download.bytes.equals(SAMPLE.png), 'the same bytes');
        }
      });

      it("answers 404 Couldn't find Student Session to callers who cannot see it, and for unknown ids", async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', SAMPLE.png, 'face.png');
        for (const user of [otherTeacher, outsideAdmin, outsideTeacher]) {
          assertAnswer(await facePhoto(user, id), 404, notFound('Student Session', id));
        }
        for (const unknown of [2_000_000_000, 'abc']) {
          assertAnswer(await facePhoto(owner, unknown), 404, notFound('Student Session', unknown));
        }
      });

      it('answers 403 to an unsigned request', async () => {
        const id = await createStudent();
        await attach(id, 'face_photo', SAMPLE.png, 'face.png');
        assertAnswer(
          await owner.client.v3('GET', '/student_sessions/:id/face_photo', { id }, { unsigned: true }),
          403,
          NOT_AUTHORIZED,
        );
      });
    });

    describe('attachPhoto (the service the candidate room uploads photos through)', () => {
      it('keeps an image, recognised by its content, and replaces an earlier photo, removing its file', async () => {
        const id = await createStudent();
        const first = await attach(id, 'id_card', SAMPLE.png, 'first.png');
        clock.current += 1000;
        const session = await server.app.services.photos.attachPhoto(id, 'id_card', uploadOf(JPEG, 'second'));
        assert.equal(session.idCardFileName, 'second');
        assert.equal(session.idCardContentType, 'image/jpeg');
        assert.equal(session.idCardFileSize, JPEG.length);
        assert.equal(session.updatedAt, clock.now());
        await assertRemoved(first);
        const second = await server.app.services.files.find(session.idCardFileId ?? 0);
        assert.ok(second !== undefined);
        await assertKept(second, JPEG);
      });

      it('refuses content that is not an image (415), whatever its name, keeping nothing', async () => {
        const id = await createStudent();
        const filesBefore = await countFiles();
        for (const bytes of [SAMPLE.pdf, SAMPLE.elf, Buffer.from('plain text, not a photo\n')]) {
          await assert.rejects(
            server.app.services.photos.attachPhoto(id, 'face_photo', uploadOf(bytes, 'face.png')),
            UnsupportedMediaType,
          );
        }
        assert.equal(await countFiles(), filesBefore);
        assert.equal((await photoFileIds(id)).face_photo, null);
      });

      it('refuses a missing or empty file naming the photo, and an unknown session keeping nothing', async () => {
        const id = await createStudent();
        await assert.rejects(
          server.app.services.photos.attachPhoto(id, 'face_photo', undefined),
          new ParamMissing('face_photo'),
        );
        await assert.rejects(
          server.app.services.photos.attachPhoto(id, 'id_card', uploadOf(Buffer.alloc(0), 'empty.png')),
          new ParamMissing('id_card'),
        );
        const filesBefore = await countFiles();
        await assert.rejects(
          server.app.services.photos.attachPhoto(2_000_000_000, 'face_photo', uploadOf(SAMPLE.png, 'x.png')),
          NotFound,
        );
        assert.equal(await countFiles(), filesBefore);
      });
    });

    describe('DELETE /api/v3/student_sessions/:id with photos', () => {
      it("removes the destroyed session's photo files", async () => {
        const id = await createStudent();
        const card = await attach(id, 'id_card', SAMPLE.png, 'card.png');
        const face = await attach(id, 'face_photo', JPEG, 'face.jpg');
        const answer = await owner.client.v3('DELETE', '/student_sessions/:id', { id });
        assertAnswer(answer, 200, {});
        await assertRemoved(card);
        await assertRemoved(face);
      });
    });

    async function countFiles(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }
  });
}
