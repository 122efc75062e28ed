import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ALL_FORMATS, BufferSource, Input } from 'mediabunny';
import pino from 'pino';
import { createApp, createCore } from '../../src/app.ts';
import { DataKeyUnavailable } from '../../src/domain/errors.ts';
import { createWorker } from '../../src/jobs/worker.ts';
import { loadServerKeys } from '../../src/security/keys.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/storage.ts';
import { runCli } from '../helpers/cli.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { multipartBody, SAMPLE } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { S3RVER_CREDENTIALS } from '../storage/s3rver.ts';

/**
 * Encryption at rest (docs/storage.md, "Encryption at rest"), end to end through the room and the
 * staff API, on local disk or on S3 (TEST_STORAGE=s3): what lands in the storage is sealed, never
 * a media file or a known text; finalisation and Range requests still work; a rotated key still
 * reads old data; a wrong server key fails closed; `invigil keys rewrap` moves the keys to a new one.
 */

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/recordings');
const CHUNKS = Array.from({ length: 5 }, (_, index) =>
  fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`)),
);
/** A text no stored byte may show. */
const KNOWN = 'Known plaintext 7f3a: Matrikelnummer 4711, Erika Mustermann';
const PHOTO = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
  Buffer.from(`JFIF ${KNOWN}`),
  crypto.randomBytes(2000),
]);
const UPLOAD = Buffer.concat([SAMPLE.pdf, Buffer.from(`% ${KNOWN}\n`)]);

/** The media signatures (WebM, MP4, JPEG, PNG) no stored object may start with. */
function mediaSignature(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))) return 'WebM';
  if (bytes.subarray(4, 8).toString('latin1') === 'ftyp') return 'MP4';
  if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'JPEG';
  if (bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))) return 'PNG';
  return undefined;
}

for (const dialect of DIALECTS) {
  describe(`encryption at rest, end to end [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let owner: TestUser;
    let examId: number;
    let store: ObjectStore;
    let session: { id: number; token: string };
    let recordingUrl: string;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      store = await createObjectStore(server.app.config.storage);
      home = await server.institute();
      owner = await server.user(home, 'teacher');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Sealed exam',
        type: 'classroom',
        duration_minutes: 30,
        upload_answers: true,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await server.close();
    });

    async function newSession(email: string): Promise<{ id: number; token: string }> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Candidate',
        email,
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return { id: record.id as number, token: record.token as string };
    }

    function room(
      token: string,
      action: string,
      fields: Record<string, string> = {},
      file?: { bytes: Buffer; fileName: string; contentType: string },
    ) {
      const { body, contentType } = multipartBody(
        fields,
        file === undefined ? [] : [{ field: 'file', ...file }],
      );
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    async function runJobs(): Promise<void> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce());
    }

    /** Every stored object, as the disk or the bucket holds it. */
    async function everyObject(): Promise<{ name: string; bytes: Buffer }[]> {
      const storage = server.app.config.storage;
      if (storage.kind === 'local') {
        const found: { name: string; bytes: Buffer }[] = [];
        const walk = (folder: string): void => {
          for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
            const full = path.join(folder, entry.name);
            if (entry.isDirectory()) walk(full);
            else found.push({ name: full, bytes: fs.readFileSync(full) });
          }
        };
        walk(storage.root);
        return found;
      }
      const client = new S3Client({
        endpoint: storage.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: S3RVER_CREDENTIALS,
      });
      try {
        const found: { name: string; bytes: Buffer }[] = [];
        let token: string | undefined;
        do {
          const listing = await client.send(
            new ListObjectsV2Command({ Bucket: storage.bucket, ContinuationToken: token }),
          );
          for (const item of listing.Contents ?? []) {
            const key = item.Key ?? '';
            // The bucket is shared by every test server of this process: only this server's files.
            const known = await server.app.database.db
              .selectFrom('files')
              .select('id')
              .where('storage_key', '=', key)
              .executeTakeFirst();
            if (known === undefined) continue;
            found.push({ name: key, bytes: await buffer(await store.get(key)) });
          }
          token = listing.IsTruncated === true ? listing.NextContinuationToken : undefined;
        } while (token !== undefined);
        return found;
      } finally {
        client.destroy();
      }
    }

    /**
     * Asserts that every stored object (at least `minimum` files recorded) is sealed: no media
     * signature at its start, and none of the known plaintexts anywhere in it.
     */
    async function assertNothingInTheClear(minimum: number): Promise<void> {
      const objects = await everyObject();
      const rows = await server.app.database.db.selectFrom('files').select('storage_key').execute();
      assert.ok(rows.length >= minimum, `${rows.length} files recorded`);
      assert.ok(objects.length >= rows.length, `${objects.length} objects found`);
      const needles = [
        Buffer.from(KNOWN),
        Buffer.from('%PDF-'),
        ...CHUNKS.map((chunk) => chunk.subarray(0, 48)),
        ...CHUNKS.map((chunk) => chunk.subarray(chunk.length - 48)),
        PHOTO.subarray(0, 32),
      ];
      for (const { name, bytes } of objects) {
        assert.equal(mediaSignature(bytes), undefined, `${name} starts with a media signature`);
        assert.equal(bytes.subarray(0, 8).toString('latin1'), 'INVGENC1', `${name} is sealed`);
        for (const needle of needles) assert.ok(!bytes.includes(needle), `${name} shows plaintext`);
      }
    }

    it('runs a session with a photo, recording chunks and an upload, and finalises its recording', async () => {
      session = await newSession('sealed@example.org');
      const photo = await room(
        session.token,
        'id_card',
        {},
        {
          bytes: PHOTO,
          fileName: 'id.jpg',
          contentType: 'image/jpeg',
        },
      );
      assert.equal(photo.status, 200, photo.text);
      const started = await room(session.token, 'start');
      assert.equal(started.status, 200, started.text);
      const startedAt = clock.now();
      for (const [sequence, bytes] of CHUNKS.entries()) {
        clock.current = startedAt + (sequence + 1) * 4000 + 150;
        const sent = await room(
          session.token,
          'recordings',
          { sequence: String(sequence), source: 'webcam' },
          {
            bytes,
            fileName: `webcam-${sequence}.webm`,
            contentType: 'video/webm',
          },
        );
        assert.equal(sent.status, 201, sent.text);
      }
      const uploaded = await room(
        session.token,
        'uploads',
        {},
        {
          bytes: UPLOAD,
          fileName: 'answers.pdf',
          contentType: 'application/pdf',
        },
      );
      assert.equal(uploaded.status, 201, uploaded.text);
      // The five chunks, the photo and the upload, as the disk or the bucket holds them.
      await assertNothingInTheClear(7);
      clock.current = startedAt + 22_000;
      const finished = await room(session.token, 'finish');
      assert.equal(finished.status, 200, finished.text);
      await runJobs();
      const listed = await owner.client.v3('GET', '/student_sessions/:id/recordings', { id: session.id });
      assert.equal(listed.status, 200, listed.text);
      const [webcam] = object(listed.json, 'body').recordings as Json[];
      assert.equal(webcam?.status, 'completed', JSON.stringify(webcam));
      recordingUrl = webcam.url as string;
      assert.ok(recordingUrl.startsWith(`${server.app.config.publicUrl}/files/`), 'served by the API');
      const file = await fetchAddress(server, recordingUrl);
      assert.equal(file.status, 200, file.text);
      assert.equal(mediaSignature(file.bytes), 'WebM', 'the download is the plaintext WebM');
      const duration = await new Input({
        source: new BufferSource(file.bytes),
        formats: ALL_FORMATS,
      }).computeDuration();
      assert.ok(duration > 15, `the assembled recording plays ${duration} s`);
    });

    it('stores no file under the storage root or in the bucket that starts with a WebM, MP4, JPEG or PNG signature or holds a known text, after the finalisation too', async () => {
      // The chunks are gone once assembled: the photo, the upload and the recording remain.
      await assertNothingInTheClear(3);
    });

    it('still answers Range requests on the sealed recording (a review player seeking)', async () => {
      const whole = await fetchAddress(server, recordingUrl);
      const url = `${server.baseUrl}${recordingUrl.slice(server.app.config.publicUrl.length)}`;
      for (const [start, end] of [
        [0, 99],
        [65_000, 140_000],
        [whole.bytes.length - 10, whole.bytes.length - 1],
      ] as const) {
        const part = await httpRequest({ url, headers: { range: `bytes=${start}-${end}` } });
        assert.equal(part.status, 206, part.text);
        assert.equal(part.headers['content-range'], `bytes ${start}-${end}/${whole.bytes.length}`);
        assert.ok(part.bytes.equals(whole.bytes.subarray(start, end + 1)), `bytes ${start}-${end}`);
      }
    });

    it('serves the photo and the upload decrypted, byte for byte', async () => {
      const idCard = await owner.client.v3('GET', '/student_sessions/:id/id_card', { id: session.id });
      assert.equal(idCard.status, 200, idCard.text);
      const photo = await fetchAddress(server, String(object(idCard.json, 'body').url));
      assert.equal(photo.status, 200, photo.text);
      assert.ok(photo.bytes.equals(PHOTO));
      const row = await server.app.database.db
        .selectFrom('files')
        .select('id')
        .where('original_name', '=', 'answers.pdf')
        .executeTakeFirstOrThrow();
      const { files } = server.app.services;
      const file = await files.find(row.id);
      assert.ok(file !== undefined);
      assert.ok((await buffer(await files.open(file))).equals(UPLOAD));
    });

    it('reads old data after a rotation, and seals new data with the new version', async () => {
      const rotated = await server.app.services.dataKeys.rotate(home);
      assert.deepEqual(rotated, [{ institute: home, version: 2 }]);
      const later = await newSession('after-rotation@example.org');
      const photo = await room(
        later.token,
        'face_photo',
        {},
        {
          bytes: PHOTO,
          fileName: 'face.jpg',
          contentType: 'image/jpeg',
        },
      );
      assert.equal(photo.status, 200, photo.text);
      const face = await server.app.database.db
        .selectFrom('student_sessions')
        .innerJoin('files', 'files.id', 'student_sessions.face_photo_file_id')
        .select('files.storage_key')
        .where('student_sessions.id', '=', later.id)
        .executeTakeFirstOrThrow();
      const sealed = await buffer(await store.get(face.storage_key));
      assert.equal(sealed.readUInt32BE(12), 2, 'sealed with data-key version 2');
      const old = await fetchAddress(server, recordingUrl);
      assert.equal(old.status, 200, old.text);
      assert.equal(mediaSignature(old.bytes), 'WebM', 'version 1 still opens the recording');
    });

    it('fails closed with a wrong server key: data_key_unavailable, nothing of the file, the reason logged', async () => {
      const logged: string[] = [];
      const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) });
      const wrong = await createApp(
        { ...server.app.config, serverSecret: 'a different server secret of forty characters' },
        { logger, clock },
      );
      try {
        await wrong.server.listen({ port: 0, host: '127.0.0.1' });
        const address = wrong.server.server.address();
        assert.ok(address !== null && typeof address === 'object');
        const row = await server.app.database.db
          .selectFrom('files')
          .select('id')
          .where('original_name', '=', 'answers.pdf')
          .executeTakeFirstOrThrow();
        const signed = await wrong.services.files.address(row.id, 60);
        const answer = await httpRequest({
          url: `http://127.0.0.1:${address.port}${signed.url.slice(wrong.config.publicUrl.length)}`,
        });
        assert.equal(answer.status, 500);
        assert.deepEqual(answer.json, { error: 'Stored data cannot be decrypted with this server key' });
        assert.ok(!answer.bytes.includes(Buffer.from(KNOWN)));
        assert.ok(
          logged.some(
            (line) => line.includes('stored data cannot be decrypted') && line.includes(`institute ${home}`),
          ),
          logged.join('\n'),
        );
        const file = await wrong.services.files.find(row.id);
        assert.ok(file !== undefined);
        await assert.rejects(wrong.services.files.open(file), DataKeyUnavailable);
      } finally {
        await wrong.close();
      }
    });

    it('`invigil keys rewrap` moves every data key to a new server key, after which it reads the old data', async () => {
      const secret = 'the new INVIGIL_SECRET, at least thirty-two characters';
      const env: Record<string, string> = {
        DATABASE_URL: server.database.url,
        DATA_DIR: server.database.dataDir,
        INVIGIL_SECRET: secret,
        ...(server.app.config.storage.kind === 's3' ? { STORAGE_URL: storageUrlOf(server) } : {}),
      };
      const usage = await runCli(['keys', 'rewrap'], env, 'too short\n');
      assert.equal(usage.code, 2, usage.stderr);
      const moved = await runCli(['keys', 'rewrap', '--old-data-dir', server.database.dataDir], env);
      assert.equal(moved.code, 0, moved.stderr);
      assert.deepEqual(JSON.parse(moved.stdout), { rewrapped: 2, unchanged: 0, unreadable: [] });
      const again = await runCli(['keys', 'rewrap', '--old-data-dir', server.database.dataDir], env);
      assert.deepEqual(JSON.parse(again.stdout), { rewrapped: 0, unchanged: 2, unreadable: [] });
      const rotated = await runCli(['keys', 'rotate', '--institute', String(home)], env);
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.deepEqual(JSON.parse(rotated.stdout), { rotated: [{ institute_id: home, version: 3 }] });

      const core = await createCore(
        { ...server.app.config, serverSecret: secret },
        { logger: pino({ level: 'silent' }) },
      );
      try {
        const row = await server.app.database.db
          .selectFrom('files')
          .select('id')
          .where('original_name', '=', 'answers.pdf')
          .executeTakeFirstOrThrow();
        const file = await core.services.files.find(row.id);
        assert.ok(file !== undefined);
        assert.ok((await buffer(await core.services.files.open(file))).equals(UPLOAD));
        // The former key no longer opens them: a copy of the old key is worth nothing now.
        const previous = loadServerKeys(undefined, server.database.dataDir);
        const result = await core.services.dataKeys.rewrap(previous);
        assert.deepEqual(result, { rewrapped: 0, unchanged: 3, unreadable: [] });
      } finally {
        await core.close();
      }
    });
  });
}

/** STORAGE_URL of a test server on S3 (the CLI's own configuration). */
function storageUrlOf(server: TestServer): string {
  const storage = server.app.config.storage;
  assert.ok(storage.kind === 's3' && storage.endpoint !== undefined);
  return `s3://${storage.bucket}?endpoint=${storage.endpoint}&region=us-east-1`;
}
