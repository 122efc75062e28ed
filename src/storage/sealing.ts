import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DataKeyring } from './keyring.ts';
import { Measure } from './measure.ts';
import {
  type DataKey,
  HEADER_BYTES,
  isSealed,
  MAX_SEGMENT_BYTES,
  OpenStream,
  parseHeader,
  SealStream,
  sealedRange,
  sealPieces,
} from './sealed.ts';
import type { ObjectStore, Storage, StoredObject } from './storage.ts';

/**
 * Reads up to `bytes` leading bytes of a stream. Returns them and the iterator of the rest (the
 * first piece read past them included as `over`).
 */
async function readHead(
  stream: Readable,
  bytes: number,
): Promise<{ head: Buffer; over: Buffer; rest: AsyncIterator<Buffer> }> {
  const rest = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const pieces: Buffer[] = [];
  let length = 0;
  while (length < bytes) {
    const next = await rest.next();
    if (next.done === true) break;
    pieces.push(next.value);
    length += next.value.length;
  }
  const all = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
  return { head: all.subarray(0, bytes), over: all.subarray(bytes), rest };
}

/** A byte stream of `first` and then what `rest` yields (closing `rest` when destroyed early). */
function streamOf(first: Buffer, rest: AsyncIterator<Buffer>): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    try {
      if (first.length > 0) yield first;
      for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
    } finally {
      await rest.return?.();
    }
  }
  return Readable.from(generate(), { objectMode: false });
}

/**
 * The storage the services use: every object sealed (src/storage/sealed.ts) under its institute's
 * current data key before `store` receives it, and opened again on the way out. Objects written
 * before step 19 (no header) are read as they are. It has no presigned addresses (they would hand
 * out ciphertext): the files service then signs its own `/files/...` addresses, which decrypt.
 * Returns the storage; building it touches nothing.
 */
export function createSealingStorage(store: ObjectStore, keyring: DataKeyring): Storage {
  /** Opens `raw` (positioned after the header) through the key its header names. */
  async function opened(
    head: Buffer,
    key: string,
    body: () => Promise<Readable>,
    range?: { start: number; end: number },
  ): Promise<Readable> {
    const header = parseHeader(head);
    const dataKey = await keyring.opening(header.institute, header.version);
    if (range === undefined) {
      const open = new OpenStream(dataKey, header);
      pipeline(await body(), open).catch(() => undefined);
      return open;
    }
    const place = sealedRange(header, await store.size(key), range.start, range.end);
    if (place.length === 0) return Readable.from([], { objectMode: false });
    const raw = await store.getRange(key, { start: place.from, end: place.to });
    const open = new OpenStream(dataKey, header, place);
    pipeline(raw, open).catch(() => undefined);
    return open;
  }

  const storage: Storage = {
    async put(body, options) {
      // Nothing listens to the body while its data key is read (the first read may ask the
      // database): an error it emits meanwhile (an archive whose first file is missing) stays on the
      // stream for the pipeline below instead of ending the process as an unhandled 'error'.
      const keep = (): void => undefined;
      body.on('error', keep);
      let dataKey: DataKey;
      try {
        dataKey = await keyring.sealing(options.institute);
      } catch (error) {
        body.destroy();
        throw error;
      } finally {
        body.off('error', keep);
      }
      const measure = new Measure(
        options.maxBytes ?? Number.POSITIVE_INFINITY,
        options.headBytes ?? 0,
        options.inspect,
      );
      const seal = new SealStream(dataKey);
      let failure: unknown;
      // The plaintext's own failure (over the limit, refused by `inspect`, a broken request) is the
      // reason the store's write fails too (the pipeline destroys `seal` with it).
      const piping = pipeline(body, measure, seal).catch((error: unknown) => {
        failure ??= error;
      });
      let stored: StoredObject;
      try {
        stored = await store.put(seal, {});
      } catch (error) {
        await piping;
        throw failure instanceof Error ? failure : error;
      }
      await piping;
      if (failure !== undefined) {
        // Cannot happen once the store took the whole stream; kept so no failure is ever stored.
        await store.delete(stored.key).catch(() => undefined);
        throw failure instanceof Error ? failure : new Error('the stream failed without an error object');
      }
      return { key: stored.key, size: measure.size, sha256: measure.hash.digest('hex') };
    },

    async get(key) {
      const { head, over, rest } = await readHead(await store.get(key), HEADER_BYTES);
      if (!isSealed(head)) return streamOf(Buffer.concat([head, over]), rest);
      try {
        return await opened(head, key, () => Promise.resolve(streamOf(over, rest)));
      } catch (error) {
        await rest.return?.();
        throw error;
      }
    },

    async getRange(key, range) {
      const { head, rest } = await readHead(
        await store.getRange(key, { start: 0, end: HEADER_BYTES - 1 }),
        HEADER_BYTES,
      );
      await rest.return?.();
      if (!isSealed(head)) return store.getRange(key, range);
      return opened(head, key, () => store.get(key), range);
    },

    delete: (key) => store.delete(key),
  };

  const { putBytes } = store;
  if (putBytes === undefined) return storage;
  return {
    ...storage,
    async putBytes(pieces, institute) {
      let size = 0;
      for (const piece of pieces) size += piece.length;
      if (size > MAX_SEGMENT_BYTES) return storage.put(Readable.from(pieces), { institute });
      // One cipher for the whole chunk; the write starts in the thread pool while the plaintext
      // is hashed here.
      const sealed = sealPieces(await keyring.sealing(institute), pieces);
      const writing = putBytes(sealed, { digest: false });
      const hash = crypto.createHash('sha256');
      for (const piece of pieces) hash.update(piece);
      const sha256 = hash.digest('hex');
      const stored = await writing;
      return { key: stored.key, size, sha256 };
    },
  };
}
