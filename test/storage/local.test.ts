import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, describe, it } from 'node:test';
import { PayloadTooLarge } from '../../src/domain/errors.ts';
import { createLocalStorage } from '../../src/storage/local.ts';
import { createUrlSigner } from '../../src/storage/signed-url.ts';
import { StorageMissing } from '../../src/storage/storage.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-storage-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('local storage', () => {
  const storage = createLocalStorage(root);

  it('stores a stream under a generated key and reads it back byte for byte', async () => {
    const bytes = crypto.randomBytes(300_000);
    const stored = await storage.put(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), {});
    assert.match(stored.key, /^[0-9a-f]{2}\/[0-9a-f]{32}$/);
    assert.equal(stored.size, bytes.length);
    assert.equal(stored.sha256, crypto.createHash('sha256').update(bytes).digest('hex'));
    assert.deepEqual(await buffer(await storage.get(stored.key)), bytes);
  });

  it('refuses more than maxBytes and leaves no file behind, not even a temporary one', async () => {
    const before = fs.readdirSync(root, { recursive: true }).length;
    await assert.rejects(
      storage.put(Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }),
      PayloadTooLarge,
    );
    assert.equal(fs.readdirSync(root, { recursive: true }).length, before);
    assert.deepEqual(fs.readdirSync(path.join(root, '.tmp')), []);
  });

  it('deletes, and reports a missing or malformed key as missing', async () => {
    const stored = await storage.put(Readable.from([Buffer.from('x')]), {});
    await storage.delete(stored.key);
    await storage.delete(stored.key);
    await assert.rejects(storage.get(stored.key), StorageMissing);
    await assert.rejects(storage.get('../../etc/passwd'), StorageMissing);
  });
});

describe('expiring file addresses', () => {
  const signer = createUrlSigner('https://exams.example.org', crypto.randomBytes(32));
  const now = Date.UTC(2026, 10, 21, 9, 30);

  it('sign an address that verifies until it expires', () => {
    const { url, expiresAt } = signer.sign(42, now, 60);
    assert.equal(expiresAt, now + 60_000);
    const parsed = new URL(url);
    assert.equal(parsed.origin + parsed.pathname, 'https://exams.example.org/files/42');
    const expires = parsed.searchParams.get('expires') ?? undefined;
    const signature = parsed.searchParams.get('signature') ?? undefined;
    assert.equal(signer.verify('42', expires, signature, now), true);
    assert.equal(signer.verify('42', expires, signature, now + 60_000), true);
    assert.equal(signer.verify('42', expires, signature, now + 61_000), false);
  });

  it('refuse an altered id, expiry or signature', () => {
    const parsed = new URL(signer.sign(42, now, 60).url);
    const expires = parsed.searchParams.get('expires') ?? '';
    const signature = parsed.searchParams.get('signature') ?? '';
    assert.equal(signer.verify('43', expires, signature, now), false);
    assert.equal(signer.verify('42', String(Number(expires) + 1000), signature, now), false);
    const flipped = `${signature.slice(0, 63)}${signature.endsWith('0') ? '1' : '0'}`;
    assert.equal(signer.verify('42', expires, flipped, now), false);
    assert.equal(signer.verify('42', undefined, signature, now), false);
  });
});
