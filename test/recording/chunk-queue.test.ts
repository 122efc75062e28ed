/**
 * The chunk queue with a keeper (web/shared/recording/chunk-queue.ts): every chunk is on the device
 * before it is sent, its sequence is noted before it goes, it is forgotten once acknowledged, and a
 * page opened after a crash resends what it was handed under the sequence last used, so a chunk
 * the server already holds is not stored twice.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../web/shared/http.ts';
import { ChunkQueue, type ChunkKeeper } from '../../web/shared/recording/chunk-queue.ts';

/** A server holding one recording: its chunks by sequence, answering as POST recordings does. */
function fakeServer(stored: string[] = []) {
  const received: { sequence: number; text: string }[] = [];
  return {
    stored,
    received,
    upload: async (form: FormData) => {
      const sequence = Number(form.get('sequence'));
      const file = form.get('file');
      assert.ok(file instanceof Blob);
      const text = await file.text();
      received.push({ sequence, text });
      if (sequence < stored.length) return { next_sequence: stored.length };
      if (sequence > stored.length)
        throw new ApiError(409, `Expected webcam recording chunk ${stored.length}, not ${sequence}`);
      stored.push(text);
      return { next_sequence: stored.length };
    },
  };
}

/** A device store in memory, logging what happens to it in order. */
function fakeKeeper() {
  const items = new Map<number, { blob: Blob; sequence: number | null }>();
  const log: string[] = [];
  let next = 1;
  const keeper: ChunkKeeper = {
    async add(_source, chunk) {
      const key = next++;
      items.set(key, { blob: chunk, sequence: null });
      log.push(`add ${await chunk.text()}`);
      return key;
    },
    async setSequence(key, sequence) {
      const item = items.get(key);
      if (item !== undefined) item.sequence = sequence;
      log.push(`sequence ${key}=${sequence}`);
      return Promise.resolve();
    },
    async remove(key) {
      items.delete(key);
      log.push(`remove ${key}`);
      return Promise.resolve();
    },
  };
  return { keeper, items, log };
}

const noPause = () => Promise.resolve();

describe('ChunkQueue with a keeper', () => {
  it('tells the server how long ago each chunk was made, also one restored from an earlier page', async () => {
    const ages: (string | null)[] = [];
    let clock = 10_000;
    const queue = new ChunkQueue({
      source: 'webcam',
      upload: (form) => {
        const age = form.get('age_ms');
        ages.push(typeof age === 'string' ? age : null);
        return Promise.resolve({ next_sequence: Number(form.get('sequence')) + 1 });
      },
      pause: noPause,
      now: () => clock,
    });
    queue.restore([
      { key: 1, blob: new Blob(['old']), sequence: null, madeAt: 4_000 },
      { key: 2, blob: new Blob(['older page']), sequence: null },
    ]);
    queue.push(new Blob(['new']));
    clock = 12_500;
    queue.startAt(0);
    await queue.drain();
    assert.deepEqual(ages, ['8500', null, '2500']);
  });

  it('keeps each chunk before sending it and forgets it once acknowledged', async () => {
    const server = fakeServer();
    const device = fakeKeeper();
    const queue = new ChunkQueue({
      source: 'webcam',
      upload: server.upload,
      pause: noPause,
      sequence: 0,
      keeper: device.keeper,
    });
    queue.push(new Blob(['a']));
    queue.push(new Blob(['b']));
    assert.equal(queue.waitingBytes, 2);
    await queue.drain();
    assert.deepEqual(server.stored, ['a', 'b']);
    assert.equal(device.items.size, 0, 'nothing left on the device');
    assert.ok(device.log.indexOf('add a') < device.log.indexOf('sequence 1=0'), 'kept before it was sent');
    assert.equal(queue.waiting, 0);
    assert.equal(queue.waitingBytes, 0);
  });

  it('resends a restored chunk under its old sequence, so one the server holds is not doubled', async () => {
    // The dead page sent "c" as 2 and the server stored it, but the page died before the answer;
    // "d" was never sent. The server holds a, b, c.
    const server = fakeServer(['a', 'b', 'c']);
    const device = fakeKeeper();
    const queue = new ChunkQueue({
      source: 'webcam',
      upload: server.upload,
      pause: noPause,
      keeper: device.keeper,
    });
    queue.push(new Blob(['e'])); // recorded by the new page meanwhile: waits behind the old ones
    queue.restore([
      { key: 91, blob: new Blob(['c']), sequence: 2 },
      { key: 92, blob: new Blob(['d']), sequence: null },
    ]);
    queue.startAt(3);
    await queue.drain();
    assert.deepEqual(server.stored, ['a', 'b', 'c', 'd', 'e'], 'the dead page’s chunks first, none twice');
    assert.deepEqual(
      server.received.map((chunk) => `${chunk.text}@${chunk.sequence}`),
      ['c@2', 'd@3', 'e@4'],
    );
    assert.ok(device.log.includes('remove 91') && device.log.includes('remove 92'));
  });

  it('realigns to the sequence a 409 names and sends the chunk there', async () => {
    const server = fakeServer(['a']);
    const queue = new ChunkQueue({ source: 'webcam', upload: server.upload, pause: noPause });
    queue.restore([{ key: 1, blob: new Blob(['b']), sequence: 5 }]);
    queue.startAt(7);
    await queue.drain();
    assert.deepEqual(server.stored, ['a', 'b']);
  });

  it('forgets what waits when the server takes no more', async () => {
    const device = fakeKeeper();
    const closed: string[] = [];
    const queue = new ChunkQueue({
      source: 'webcam',
      sequence: 0,
      pause: noPause,
      keeper: device.keeper,
      upload: () =>
        Promise.reject(new ApiError(409, 'Recording chunks are accepted only while the exam is started')),
      onClosed: (error) => closed.push(error.message),
    });
    queue.push(new Blob(['a']));
    await queue.drain();
    assert.equal(closed.length, 1);
    assert.equal(queue.lost, 1);
    await Promise.resolve();
    assert.equal(device.items.size, 0, 'dropped from the device too');
  });

  it('sends from memory what the device refuses to keep, and says so', async () => {
    const server = fakeServer();
    const refused: unknown[] = [];
    const keeper: ChunkKeeper = {
      add: () => Promise.reject(new Error('QuotaExceededError')),
      setSequence: () => Promise.resolve(),
      remove: () => Promise.resolve(),
    };
    const queue = new ChunkQueue({
      source: 'webcam',
      sequence: 0,
      pause: noPause,
      keeper,
      upload: server.upload,
      onKeepFailed: (error) => refused.push(error),
    });
    queue.push(new Blob(['a']));
    await queue.drain();
    assert.deepEqual(server.stored, ['a']);
    assert.equal(refused.length, 1);
  });
});
