import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config/config.ts';
import { PayloadTooLarge } from '../../src/domain/errors.ts';
import { createObjectStore, createStorage } from '../../src/storage/index.ts';
import { createS3Storage } from '../../src/storage/s3.ts';
import { type ObjectStore, StorageMissing } from '../../src/storage/storage.ts';
import { fetchAddress } from '../helpers/files.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { v3Multipart } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from './s3rver.ts';

type Json = Record<string, unknown>;

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const MIB = 1024 * 1024;

/** Splits bytes into chunks the way a network stream delivers them. */
function streamOf(bytes: Buffer, chunk = 64 * 1024): Readable {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunk)
    chunks.push(bytes.subarray(offset, offset + chunk));
  return Readable.from(chunks);
}

let s3: LocalS3;
let client: S3Client;
const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

before(async () => {
  s3 = await startLocalS3();
  // The SDK reads these itself, as it does in production (the service never names them).
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
});

after(async () => {
  client.destroy();
  await s3.close();
  for (const [name, value] of [
    ['AWS_ACCESS_KEY_ID', savedEnv.id],
    ['AWS_SECRET_ACCESS_KEY', savedEnv.secret],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Every key in the bucket. */
async function keysInBucket(): Promise<string[]> {
  const listing = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
  return (listing.Contents ?? []).map((object) => object.Key ?? '').sort();
}

describe('S3 storage (against s3rver)', () => {
  let storage: ObjectStore;

  before(() => {
    storage = createS3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1' });
  });

  it('stores a stream under a generated key and reads it back byte for byte, with its size and SHA-256', async () => {
    const bytes = crypto.randomBytes(300_000);
    const stored = await storage.put(streamOf(bytes), {});
    assert.match(stored.key, /^[0-9a-f]{2}\/[0-9a-f]{32}$/);
    assert.equal(stored.size, bytes.length);
    assert.equal(stored.sha256, sha256(bytes));
    assert.ok((await keysInBucket()).includes(stored.key), 'the object is in the bucket under its key');
    assert.deepEqual(await buffer(await storage.get(stored.key)), bytes);
  });

  it('streams a file larger than one part as a multipart upload, byte for byte', async () => {
    const bytes = crypto.randomBytes(17 * MIB + 12_345);
    const stored = await storage.put(streamOf(bytes), {});
    assert.equal(stored.size, bytes.length);
    assert.equal(stored.sha256, sha256(bytes));
    const read = await buffer(await storage.get(stored.key));
    assert.equal(read.length, bytes.length);
    assert.ok(read.equals(bytes), 'the same bytes');
  });

  it('stores an empty stream', async () => {
    const stored = await storage.put(Readable.from([]), {});
    assert.equal(stored.size, 0);
    assert.equal(stored.sha256, sha256(Buffer.alloc(0)));
    assert.deepEqual(await buffer(await storage.get(stored.key)), Buffer.alloc(0));
  });

  it('refuses more than maxBytes with PayloadTooLarge and leaves no object behind', async () => {
    const before = await keysInBucket();
    await assert.rejects(
      storage.put(Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }),
      PayloadTooLarge,
    );
    assert.deepEqual(await keysInBucket(), before);
  });

  it('refuses a stream over the limit after whole parts were sent, leaving no object behind', async () => {
    const before = await keysInBucket();
    await assert.rejects(
      storage.put(streamOf(crypto.randomBytes(20 * MIB)), { maxBytes: 17 * MIB }),
      PayloadTooLarge,
    );
    assert.deepEqual(await keysInBucket(), before);
  });

  it('deletes (twice is harmless), and reports a missing or malformed key as missing', async () => {
    const stored = await storage.put(Readable.from([Buffer.from('x')]), {});
    await storage.delete(stored.key);
    await storage.delete(stored.key);
    assert.ok(!(await keysInBucket()).includes(stored.key));
    await assert.rejects(storage.get(stored.key), StorageMissing);
    await assert.rejects(storage.get('../../etc/passwd'), StorageMissing);
    await assert.rejects(storage.get('AB/notakey'), StorageMissing);
  });

  describe('presigned addresses', () => {
    it('download the object byte for byte with its original name and type, expiring when S3 is told', async () => {
      const bytes = crypto.randomBytes(5000);
      const stored = await storage.put(streamOf(bytes), {});
      assert.ok(storage.presign, 'S3 storage presigns');
      const now = Date.now();
      const address = await storage.presign(stored.key, {
        seconds: 300,
        fileName: 'Ausweis Müller.png',
        contentType: 'image/png',
        now,
      });
      assert.equal(address.expiresAt, Math.floor(now / 1000) * 1000 + 300_000);
      const url = new URL(address.url);
      assert.equal(url.origin, s3.endpoint);
      assert.equal(url.pathname, `/${s3.bucket}/${stored.key}`);
      assert.equal(url.searchParams.get('X-Amz-Expires'), '300');
      assert.equal(
        url.searchParams.get('X-Amz-Date'),
        new Date(Math.floor(now / 1000) * 1000).toISOString().replace(/[-:]|\.\d{3}/g, ''),
      );
      const download = await httpRequest({ url: address.url });
      assert.equal(download.status, 200, download.text);
      assert.ok(download.bytes.equals(bytes), 'the same bytes');
      assert.equal(download.headers['content-type'], 'image/png');
      assert.equal(
        download.headers['content-disposition'],
        `attachment; filename="Ausweis M_ller.png"; filename*=UTF-8''Ausweis%20M%C3%BCller.png`,
      );
    });

    it('are refused once their life has passed', async () => {
      const stored = await storage.put(Readable.from([Buffer.from('old')]), {});
      assert.ok(storage.presign);
      const signedLongAgo = await storage.presign(stored.key, {
        seconds: 60,
        fileName: 'a.txt',
        contentType: 'text/plain',
        now: Date.now() - 61_000,
      });
      assert.equal((await httpRequest({ url: signedLongAgo.url })).status, 403);
    });

    it('refuse to sign a malformed key', async () => {
      assert.ok(storage.presign);
      await assert.rejects(
        storage.presign('../x', { seconds: 60, fileName: 'x', contentType: 'text/plain', now: Date.now() }),
        StorageMissing,
      );
    });
  });

  it('is what createObjectStore builds for STORAGE_URL=s3://BUCKET?endpoint=URL&region=R', async () => {
    const config = loadConfig({ STORAGE_URL: s3.storageUrl, DATA_DIR: '/nonexistent-invigil-data' });
    const configured = await createObjectStore(config.storage);
    assert.equal(typeof configured.presign, 'function');
    // The services' storage seals every object, so it hands out no presigned (ciphertext) address.
    assert.equal((await createStorage(config)).presign, undefined);
    const stored = await configured.put(Readable.from([Buffer.from('through the configuration')]), {});
    assert.deepEqual(
      await buffer(await storage.get(stored.key)),
      Buffer.from('through the configuration'),
      'the object lies in the configured bucket',
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`the service on S3 storage, end to end [${dialect}]`, () => {
    let server: TestServer;
    let teacher: Awaited<ReturnType<TestServer['user']>>;

    before(async () => {
      server = await startTestServer(dialect, {
        env: { STORAGE_URL: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1` },
      });
      teacher = await server.user(await server.institute(), 'teacher');
    });

    after(async () => {
      await server.close();
    });

    function object(answer: HttpAnswer, key: string): Json {
      const body = answer.json as Json;
      return body[key] as Json;
    }

    it('uploads an attachment to the bucket sealed, serves it decrypted through a signed /files url byte for byte, and deletes it', async () => {
      const created = await teacher.client.v3('POST', '/exams', {
        name: 'Exam on S3',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(created.status, 201, created.text);
      const examId = object(created, 'exam').id as number;
      const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), crypto.randomBytes(200_000)]);
      const keysBefore = await keysInBucket();

      const uploaded = await v3Multipart(
        teacher.client,
        'POST',
        '/exams/:exam_id/attachments',
        { exam_id: examId },
        [{ field: 'document', fileName: 'Regeln für alle.pdf', contentType: 'application/pdf', bytes }],
      );
      assert.equal(uploaded.status, 201, uploaded.text);
      const attachment = object(uploaded, 'attachment');
      assert.equal(attachment.file_size, bytes.length);
      const newKeys = (await keysInBucket()).filter((key) => !keysBefore.includes(key));
      assert.equal(newKeys.length, 1, 'one new object in the bucket');
      const row = await server.app.database.db
        .selectFrom('files')
        .select(['storage_key', 'sha256'])
        .where('storage_key', '=', newKeys[0] ?? '')
        .executeTakeFirstOrThrow();
      assert.equal(row.sha256, sha256(bytes));
      const bucket = createS3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1' });
      const inBucket = await buffer(await bucket.get(row.storage_key));
      assert.equal(
        inBucket.subarray(0, 8).toString('latin1'),
        'INVGENC1',
        'the bucket holds the sealed object',
      );
      assert.ok(!inBucket.includes(bytes.subarray(9, 64)), 'and none of the plaintext');

      const url = new URL(String(attachment.url));
      assert.equal(url.pathname.startsWith('/files/'), true, 'the API serves it (decrypting), not S3');
      const download = await fetchAddress(server, url.toString());
      assert.equal(download.status, 200, download.text);
      assert.ok(download.bytes.equals(bytes), 'the same bytes');
      assert.equal(download.headers['content-type'], 'application/pdf');
      assert.match(
        String(download.headers['content-disposition']),
        /filename\*=UTF-8''Regeln%20f%C3%BCr%20alle\.pdf/,
      );

      const destroyed = await teacher.client.v3('DELETE', '/exams/:exam_id/attachments/:id', {
        exam_id: examId,
        id: attachment.id as number,
      });
      assert.equal(destroyed.status, 200, destroyed.text);
      assert.deepEqual(destroyed.json, {});
      assert.deepEqual(await keysInBucket(), keysBefore, 'the object left the bucket');
      assert.equal((await fetchAddress(server, url.toString())).status, 404, 'the old address finds nothing');
    });
  });
}
