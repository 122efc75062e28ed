import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DataKeyUnavailable, PayloadTooLarge, UnsupportedMediaType } from '../../src/domain/errors.ts';
import { keyringOf, type KeyringSnapshot } from '../../src/storage/keyring.ts';
import { createLocalStorage } from '../../src/storage/local.ts';
import { createS3Storage } from '../../src/storage/s3.ts';
import {
  HEADER_BYTES,
  OpenStream,
  parseHeader,
  SealBroken,
  SealStream,
  sealedSize,
  sealPieces,
  STREAM_SEGMENT_BYTES,
  TAG_BYTES,
} from '../../src/storage/sealed.ts';
import { createSealingStorage } from '../../src/storage/sealing.ts';
import type { ObjectStore, Storage } from '../../src/storage/storage.ts';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from './s3rver.ts';

const SEGMENT = STREAM_SEGMENT_BYTES;
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const dataKey = { institute: 3, version: 1, key: crypto.randomBytes(32) };

/** Splits bytes the way a network stream delivers them (pieces that do not line up with segments). */
function streamOf(bytes: Buffer, piece = 10_007): Readable {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += piece)
    pieces.push(bytes.subarray(offset, offset + piece));
  return Readable.from(pieces);
}

async function seal(bytes: Buffer): Promise<Buffer> {
  return buffer(streamOf(bytes).pipe(new SealStream(dataKey)));
}

async function open(sealed: Buffer, key: Buffer = dataKey.key): Promise<Buffer> {
  const header = parseHeader(sealed);
  return buffer(streamOf(sealed.subarray(HEADER_BYTES)).pipe(new OpenStream(key, header)));
}

/** The media signatures no stored object may start with. */
function startsWithMedia(bytes: Buffer): boolean {
  return (
    bytes.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])) ||
    bytes.subarray(4, 8).toString('latin1') === 'ftyp' ||
    bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])) ||
    bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
  );
}

describe('the sealed-object format', () => {
  for (const size of [0, 1, SEGMENT - 1, SEGMENT, SEGMENT + 1, 3 * SEGMENT, 3 * SEGMENT + 17]) {
    it(`round-trips ${size} bytes, with the size the format predicts`, async () => {
      const bytes = crypto.randomBytes(size);
      const sealed = await seal(bytes);
      assert.equal(sealed.length, sealedSize(size, SEGMENT));
      assert.equal(sealed.subarray(0, 8).toString('latin1'), 'INVGENC1');
      const header = parseHeader(sealed);
      assert.deepEqual([header.institute, header.version, header.segmentBytes], [3, 1, SEGMENT]);
      assert.ok((await open(sealed)).equals(bytes));
    });
  }

  it('hides media: a WebM, JPEG, PNG or MP4 sealed starts with the header and holds none of the plaintext', async () => {
    const text = Buffer.from('Known plaintext of a candidate upload: Matrikelnummer 4711');
    for (const signature of [
      Buffer.from([0x1a, 0x45, 0xdf, 0xa3]),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from('\u0000\u0000\u0000\u0020ftypisom', 'latin1'),
    ]) {
      const bytes = Buffer.concat([signature, text, crypto.randomBytes(1000), text]);
      for (const sealed of [await seal(bytes), Buffer.concat(sealPieces(dataKey, [bytes]))]) {
        assert.ok(!startsWithMedia(sealed));
        assert.ok(!sealed.includes(text));
        assert.ok(!sealed.includes(signature));
      }
    }
  });

  it('seals bytes held in memory as one segment that the stream reader opens', async () => {
    const bytes = crypto.randomBytes(300_000);
    const sealed = Buffer.concat(sealPieces(dataKey, [bytes.subarray(0, 5), bytes.subarray(5)]));
    assert.equal(sealed.length, HEADER_BYTES + bytes.length + TAG_BYTES, 'one segment, one tag');
    assert.ok((await open(sealed)).equals(bytes));
    assert.equal((await open(Buffer.concat(sealPieces(dataKey, [])))).length, 0, 'an empty one too');
  });

  it('uses a fresh object key each time: the same plaintext seals differently', async () => {
    const bytes = Buffer.alloc(1000, 7);
    assert.ok(!(await seal(bytes)).subarray(HEADER_BYTES).equals((await seal(bytes)).subarray(HEADER_BYTES)));
  });

  it('detects a flipped bit, a cut-off end, a dropped or swapped segment, a changed header and a wrong key', async () => {
    const bytes = crypto.randomBytes(3 * SEGMENT + 100);
    const sealed = await seal(bytes);
    const segment = SEGMENT + TAG_BYTES;
    const flipped = Buffer.from(sealed);
    flipped[HEADER_BYTES + segment + 5] = (flipped[HEADER_BYTES + segment + 5] ?? 0) ^ 1;
    const swapped = Buffer.concat([
      sealed.subarray(0, HEADER_BYTES),
      sealed.subarray(HEADER_BYTES + segment, HEADER_BYTES + 2 * segment),
      sealed.subarray(HEADER_BYTES, HEADER_BYTES + segment),
      sealed.subarray(HEADER_BYTES + 2 * segment),
    ]);
    const dropped = Buffer.concat([
      sealed.subarray(0, HEADER_BYTES + segment),
      sealed.subarray(HEADER_BYTES + 2 * segment),
    ]);
    const otherInstitute = Buffer.from(sealed);
    otherInstitute.writeUInt32BE(4, 8);
    const cases: [string, Buffer, Buffer?][] = [
      ['a flipped bit', flipped],
      ['a cut at a segment boundary', sealed.subarray(0, HEADER_BYTES + 3 * segment)],
      ['a cut inside a segment', sealed.subarray(0, sealed.length - 50)],
      ['swapped segments', swapped],
      ['a dropped segment', dropped],
      ['a changed header', otherInstitute],
      ['a wrong key', sealed, crypto.randomBytes(32)],
    ];
    for (const [name, damaged, key] of cases) {
      await assert.rejects(open(damaged, key), SealBroken, name);
    }
  });

  it('refuses a header no sealer writes', () => {
    assert.throws(() => parseHeader(Buffer.from('not sealed at all, just text of forty b')), SealBroken);
    const huge = Buffer.concat(sealPieces(dataKey, [Buffer.from('x')]));
    huge.writeUInt32BE(64 * 1024 * 1024, 16);
    assert.throws(() => parseHeader(huge), SealBroken);
  });
});

/** The sealing storage, run against one object store (local disk, then S3). */
function sealingSuite(
  name: string,
  makeStore: () => ObjectStore,
  everyObject: () => Promise<Buffer[]>,
): void {
  describe(`the sealing storage on ${name}`, () => {
    const snapshot: KeyringSnapshot = {
      institute: 5,
      current: 1,
      keys: { 1: crypto.randomBytes(32).toString('base64') },
    };
    let store: ObjectStore;
    let storage: Storage;

    before(() => {
      store = makeStore();
      storage = createSealingStorage(store, keyringOf(snapshot));
    });

    it('stores a stream sealed and reports the plaintext size and SHA-256', async () => {
      const bytes = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(200_000)]);
      const stored = await storage.put(streamOf(bytes), { institute: 5 });
      assert.equal(stored.size, bytes.length);
      assert.equal(stored.sha256, sha256(bytes));
      const raw = await buffer(await store.get(stored.key));
      assert.equal(raw.length, sealedSize(bytes.length, SEGMENT));
      assert.ok(!startsWithMedia(raw));
      assert.ok((await buffer(await storage.get(stored.key))).equals(bytes));
    });

    it('reads ranges within one segment, across segments and to the end, reading only what covers them', async () => {
      const bytes = crypto.randomBytes(4 * SEGMENT + 999);
      const stored = await storage.put(streamOf(bytes), { institute: 5 });
      const ranges = [
        [0, 0],
        [10, 20],
        [SEGMENT - 3, SEGMENT + 3],
        [SEGMENT, 2 * SEGMENT - 1],
        [100, 3 * SEGMENT + 50],
        [4 * SEGMENT, bytes.length - 1],
        [bytes.length - 1, bytes.length - 1],
        [0, bytes.length - 1],
      ] as const;
      assert.ok(storage.getRange);
      for (const [start, end] of ranges) {
        const part = await buffer(await storage.getRange(stored.key, { start, end }));
        assert.ok(part.equals(bytes.subarray(start, end + 1)), `bytes ${start}-${end}`);
      }
    });

    it('fails the put with the error of a body that broke while its data key was still being read', async () => {
      const before = (await everyObject()).length;
      // A keyring that answers a moment later, as one reading the database does.
      const slow = keyringOf(snapshot);
      const slowly = createSealingStorage(store, {
        sealing: async (institute) => {
          await delay(20);
          return slow.sealing(institute);
        },
        opening: (institute, version) => slow.opening(institute, version),
      });
      const body = new PassThrough();
      const putting = slowly.put(body, { institute: 5 });
      // Nothing of the storage listens yet: unheard, this error would end the process.
      body.destroy(new Error('the first file is missing'));
      await assert.rejects(putting, /the first file is missing/);
      assert.equal((await everyObject()).length, before, 'nothing kept');
    });

    it('keeps nothing when the stream is over its limit or refused by its first bytes', async () => {
      const before = (await everyObject()).length;
      await assert.rejects(
        storage.put(streamOf(crypto.randomBytes(300_000)), { institute: 5, maxBytes: 100_000 }),
        PayloadTooLarge,
      );
      await assert.rejects(
        storage.put(streamOf(Buffer.from('plain text')), {
          institute: 5,
          headBytes: 4,
          inspect: () => {
            throw new UnsupportedMediaType('File type not allowed');
          },
        }),
        UnsupportedMediaType,
      );
      assert.equal((await everyObject()).length, before);
    });

    it('reads an object stored before encryption as it is (the upgrade path), ranges too', async () => {
      const legacy = Buffer.from('stored in step 18, before encryption at rest');
      const stored = await store.put(Readable.from([legacy]), {});
      assert.ok((await buffer(await storage.get(stored.key))).equals(legacy));
      assert.ok(storage.getRange);
      assert.equal(
        (await buffer(await storage.getRange(stored.key, { start: 7, end: 13 }))).toString(),
        'in step',
      );
      const tiny = await store.put(Readable.from([Buffer.from('ab')]), {});
      assert.equal((await buffer(await storage.get(tiny.key))).toString(), 'ab');
    });

    it('fails closed when the key that sealed an object is not there', async () => {
      const stored = await storage.put(streamOf(Buffer.from('secret answer')), { institute: 5 });
      const stranger = createSealingStorage(
        store,
        keyringOf({ institute: 6, current: 1, keys: { 1: crypto.randomBytes(32).toString('base64') } }),
      );
      await assert.rejects(stranger.get(stored.key), DataKeyUnavailable);
      assert.ok(stranger.getRange);
      await assert.rejects(stranger.getRange(stored.key, { start: 0, end: 3 }), DataKeyUnavailable);
    });

    it('fails with SealBroken, never garbage, when the key is the wrong one', async () => {
      const stored = await storage.put(streamOf(Buffer.from('secret answer')), { institute: 5 });
      const forged = createSealingStorage(
        store,
        keyringOf({ ...snapshot, keys: { 1: crypto.randomBytes(32).toString('base64') } }),
      );
      await assert.rejects(async () => buffer(await forged.get(stored.key)), SealBroken);
    });

    it('offers no presigned addresses (they would hand out ciphertext)', () => {
      assert.equal(storage.presign, undefined);
    });
  });
}

describe('sealing over local disk and S3', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-sealed-'));
  after(() => fs.rmSync(directory, { recursive: true, force: true }));

  sealingSuite(
    'local disk',
    () => createLocalStorage(directory),
    () => {
      const found: Buffer[] = [];
      for (const folder of fs.readdirSync(directory)) {
        if (folder === '.tmp') {
          assert.deepEqual(fs.readdirSync(path.join(directory, folder)), [], 'no temporary file left');
          continue;
        }
        for (const file of fs.readdirSync(path.join(directory, folder))) {
          found.push(fs.readFileSync(path.join(directory, folder, file)));
        }
      }
      return Promise.resolve(found);
    },
  );

  it('writes a chunk held in memory as one segment (one cipher), the plaintext hashed', async () => {
    const snapshot = { institute: 9, current: 1, keys: { 1: crypto.randomBytes(32).toString('base64') } };
    const storage = createSealingStorage(createLocalStorage(directory), keyringOf(snapshot));
    assert.ok(storage.putBytes);
    const chunk = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(400_000)]);
    const stored = await storage.putBytes([chunk.subarray(0, 1000), chunk.subarray(1000)], 9);
    assert.equal(stored.size, chunk.length);
    assert.equal(stored.sha256, sha256(chunk));
    const raw = fs.readFileSync(path.join(directory, stored.key));
    assert.equal(raw.length, HEADER_BYTES + chunk.length + TAG_BYTES, 'one segment');
    assert.ok(!startsWithMedia(raw));
    assert.ok((await buffer(await storage.get(stored.key))).equals(chunk));
  });

  let s3: LocalS3 | undefined;
  let client: S3Client | undefined;
  const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  before(async () => {
    s3 = await startLocalS3();
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
    client?.destroy();
    await s3?.close();
    if (savedEnv.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = savedEnv.id;
    if (savedEnv.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = savedEnv.secret;
  });

  sealingSuite(
    'S3',
    () => {
      assert.ok(s3 !== undefined);
      return createS3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1' });
    },
    async () => {
      assert.ok(s3 !== undefined && client !== undefined);
      const listing = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      return (listing.Contents ?? []).map(() => Buffer.alloc(0));
    },
  );
});
