import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { StoredFile } from '../../src/domain/files/file.ts';
import { StorageMissing } from '../../src/storage/storage.ts';
import { type HttpAnswer, httpRequest } from './http.ts';
import type { TestServer } from './server.ts';

/**
 * Storage-aware checks for tests that store files: the same test proves the same thing on local disk
 * and on S3 (TEST_STORAGE=s3), through the files service rather than paths under DATA_DIR.
 */

/**
 * True when this test process stores files on S3 (`TEST_STORAGE=s3`, see startTestServer). Known
 * before any server starts, so it can decide which tests to register; inside a test, prefer onS3.
 */
export const S3_STORAGE = process.env.TEST_STORAGE === 's3';

/**
 * True when the server's file addresses are S3 presigned URLs. Never since step 19: every object
 * is sealed (docs/storage.md, "Encryption at rest"), so on S3 too the addresses are the server's own
 * `/files/...`, which decrypt. Kept so the tests read the same on both storages.
 */
export function onS3(server: TestServer): boolean {
  return server.app.config.storage.kind === 's3' && server.app.services.files.presigns;
}

/**
 * Fetches an expiring address. A `{PUBLIC_URL}/files/...` address is sent to the test server's own
 * port (PUBLIC_URL is not where the test server listens); any other address (an S3 presigned URL) is
 * fetched where it points.
 */
export function fetchAddress(server: TestServer, url: string): Promise<HttpAnswer> {
  const prefix = `${server.app.config.publicUrl}/files/`;
  if (url.startsWith(prefix)) {
    return httpRequest({ url: `${server.baseUrl}${url.slice(server.app.config.publicUrl.length)}` });
  }
  return httpRequest({ url });
}

/** Reads a stored file's bytes through the files service (record, then the storage's object). */
export async function storedBytes(server: TestServer, fileId: number): Promise<Buffer> {
  const file = await server.app.services.files.find(fileId);
  assert.ok(file !== undefined, `file ${fileId} has a record`);
  const stream = await server.app.services.files.open(file);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Asserts the file has its record and its stored object, whose bytes match the record's size and
 * SHA-256 (and equal `bytes` when given). Returns the record, for a later assertNotStored.
 */
export async function assertStored(server: TestServer, fileId: number, bytes?: Buffer): Promise<StoredFile> {
  const file = await server.app.services.files.find(fileId);
  assert.ok(file !== undefined, `file ${fileId} has a record`);
  const stored = await storedBytes(server, fileId);
  assert.equal(stored.length, file.size, 'the stored object has the recorded size');
  assert.equal(
    crypto.createHash('sha256').update(stored).digest('hex'),
    file.sha256,
    'and the recorded SHA-256',
  );
  if (bytes !== undefined) assert.ok(stored.equals(bytes), 'the stored bytes are the ones sent');
  return file;
}

/**
 * Asserts a file is gone: no record, and no stored object under its key. Takes the record as it was
 * while stored (from assertStored): once the record is gone, only it still names the object.
 */
export async function assertNotStored(server: TestServer, file: StoredFile): Promise<void> {
  assert.equal(await server.app.services.files.find(file.id), undefined, `file ${file.id} has no record`);
  await assert.rejects(server.app.services.files.open(file), StorageMissing, 'no stored object');
}

/** A SigV4 timestamp (`X-Amz-Date`): `yyyyMMdd'T'HHmmss'Z'` in UTC, for epoch milliseconds. */
export function amzDate(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/**
 * Asserts `url` is the S3 presigned GET address of `file` that src/storage/s3.ts makes: path-style on
 * the configured endpoint, SigV4 query authentication signed at `signedAt` (epoch ms, rounded down to
 * the second as the presigner does) and valid `seconds`, asking S3 to answer with the file's type,
 * its original name as an attachment and no caching.
 */
export function assertPresignedAddress(
  server: TestServer,
  url: string,
  expected: { file: StoredFile; seconds: number; signedAt: number },
): void {
  const storage = server.app.config.storage;
  assert.ok(storage.kind === 's3', 'the server stores on S3');
  assert.ok(storage.endpoint !== undefined, 'the test S3 has an endpoint');
  const address = new URL(url);
  assert.match(address.protocol, /^https?:$/);
  assert.equal(address.origin, new URL(storage.endpoint).origin, 'on the S3 endpoint');
  assert.equal(address.pathname, `/${storage.bucket}/${expected.file.storageKey}`, 'the object, path-style');
  const query = address.searchParams;
  const date = amzDate(Math.floor(expected.signedAt / 1000) * 1000);
  assert.equal(query.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
  assert.equal(query.get('X-Amz-Date'), date, 'signed at the service clock');
  assert.equal(query.get('X-Amz-Expires'), String(expected.seconds), 'valid for the lifetime');
  assert.match(
    query.get('X-Amz-Credential') ?? '',
    new RegExp(`^[^/]+/${date.slice(0, 8)}/${storage.region ?? 'us-east-1'}/s3/aws4_request$`),
  );
  assert.equal(query.get('X-Amz-SignedHeaders'), 'host');
  assert.match(query.get('X-Amz-Signature') ?? '', /^[0-9a-f]{64}$/);
  assert.equal(query.get('response-content-type'), expected.file.contentType);
  assert.match(query.get('response-content-disposition') ?? '', /^attachment; filename="/);
  assert.ok(
    (query.get('response-content-disposition') ?? '').endsWith(
      `; filename*=UTF-8''${encodeURIComponent(expected.file.originalName)}`,
    ),
    'the original name',
  );
  assert.equal(query.get('response-cache-control'), 'private, no-store');
}
