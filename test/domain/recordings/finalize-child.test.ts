import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, FilePathSource, Input } from 'mediabunny';
import type { FinalizeRequest } from '../../../src/domain/recordings/finalize-child.ts';
import { assembleInChild } from '../../../src/domain/recordings/recordings.service.ts';
import crypto from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { keyringOf, type KeyringSnapshot } from '../../../src/storage/keyring.ts';
import { createLocalStorage } from '../../../src/storage/local.ts';
import { createSealingStorage } from '../../../src/storage/sealing.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');

describe('the assembling child process', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-finalize-child-'));
  const root = path.join(directory, 'files');
  const raw = createLocalStorage(root);
  /** The data keys the parent hands the child: version 2 seals, version 1 sealed some chunks. */
  const dataKeys: KeyringSnapshot = {
    institute: 7,
    current: 2,
    keys: { 1: crypto.randomBytes(32).toString('base64'), 2: crypto.randomBytes(32).toString('base64') },
  };
  const storage = createSealingStorage(raw, keyringOf(dataKeys));
  const olderKeys = createSealingStorage(raw, keyringOf({ ...dataKeys, current: 1 }));
  let keys: string[] = [];
  const startedAt = 1_700_000_000_000;

  /** A request for the camera fixture's chunks, repeated `times` times (4 s apart each). */
  function request(times: number, overrides: Partial<FinalizeRequest> = {}): FinalizeRequest {
    const chunks = Array.from({ length: times }, () => keys)
      .flat()
      .map((storageKey, sequence) => ({
        sequence,
        storageKey,
        size: 1,
        createdAt: startedAt + (sequence + 1) * 4000,
      }));
    return {
      chunks,
      startedAt,
      endedAt: null,
      gapThresholdMs: 5000,
      outputPath: path.join(directory, `out-${Math.random().toString(16).slice(2)}.webm`),
      storage: { kind: 'local', root },
      keys: dataKeys,
      ...overrides,
    };
  }

  before(async () => {
    keys = [];
    for (let index = 0; index < 5; index += 1) {
      const bytes = fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`));
      // Sealed like the room's chunks, the first two under the older key version.
      keys.push((await (index < 2 ? olderKeys : storage).putBytes?.([bytes], 7))?.key ?? '');
    }
  });

  after(() => fs.rmSync(directory, { recursive: true, force: true }));

  it('assembles, stores the file itself and reports it with its own peak RSS', async () => {
    const input = request(1);
    const outcome = await assembleInChild(input, new AbortController().signal, () => Promise.resolve());
    assert.equal(outcome.type, 'done');
    if (outcome.type !== 'done') return;
    assert.ok(outcome.peakRss > 10 * 1024 * 1024);
    assert.ok(outcome.result.durationSeconds > 15);
    assert.equal(fs.existsSync(input.outputPath), false, 'the temporary file is removed');
    const sealed = fs.readFileSync(path.join(root, outcome.stored.key));
    assert.equal(sealed.subarray(0, 8).toString('latin1'), 'INVGENC1', 'the recording is stored sealed');
    const plain = await buffer(await storage.get(outcome.stored.key));
    assert.equal(plain.length, outcome.stored.size);
    assert.equal(crypto.createHash('sha256').update(plain).digest('hex'), outcome.stored.sha256);
    const stored = path.join(directory, 'opened.webm');
    fs.writeFileSync(stored, plain);
    const file = new Input({ source: new FilePathSource(stored), formats: ALL_FORMATS });
    try {
      assert.ok(Math.abs((await file.computeDuration()) - outcome.result.durationSeconds) < 0.1);
    } finally {
      file.dispose();
    }
  });

  it('reports a stream with nothing playable as unplayable', async () => {
    const input = request(1);
    const outcome = await assembleInChild(
      { ...input, chunks: input.chunks.map((chunk) => ({ ...chunk, storageKey: 'missing' })) },
      new AbortController().signal,
      () => Promise.resolve(),
    );
    assert.equal(outcome.type, 'unplayable');
  });

  it('is killed when the job is aborted, and its temporary file removed', async () => {
    const input = request(200);
    const controller = new AbortController();
    const reason = new Error('lease lost');
    let progressed = 0;
    await assert.rejects(
      assembleInChild(input, controller.signal, (done) => {
        progressed = done;
        controller.abort(reason);
        return Promise.resolve();
      }),
      (error) => error === reason,
    );
    assert.ok(progressed > 0);
    assert.equal(fs.existsSync(input.outputPath), false);
  });

  it('fails with the tail of its stderr when it cannot work', async () => {
    const notADirectory = path.join(directory, 'a-file');
    fs.writeFileSync(notADirectory, '');
    await assert.rejects(
      assembleInChild(
        request(1, { storage: { kind: 'local', root: notADirectory } }),
        new AbortController().signal,
        () => Promise.resolve(),
      ),
      /recording assembly failed \(exit code 1\): .*ENOTDIR/s,
    );
  });
});
