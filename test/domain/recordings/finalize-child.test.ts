import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, FilePathSource, Input } from 'mediabunny';
import type { FinalizeRequest } from '../../../src/domain/recordings/finalize-child.ts';
import { assembleInChild } from '../../../src/domain/recordings/recordings.service.ts';
import { createLocalStorage } from '../../../src/storage/local.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');

describe('the assembling child process', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-finalize-child-'));
  const root = path.join(directory, 'files');
  const storage = createLocalStorage(root);
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
      ...overrides,
    };
  }

  before(async () => {
    keys = [];
    for (let index = 0; index < 5; index += 1) {
      const bytes = fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`));
      keys.push((await storage.putBytes?.([bytes]))?.key ?? '');
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
    const stored = path.join(root, outcome.stored.key);
    assert.equal(fs.statSync(stored).size, outcome.stored.size);
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
