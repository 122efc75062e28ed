/**
 * The process that assembles one stream of a recording (docs/recordings.md): started by the
 * recordings service with a small heap, so the worker's own size (every service, both database
 * drivers) does not count towards what a finalisation costs, and what the assembly allocates is
 * given back when it exits.
 *
 * Reads a FinalizeRequest as JSON on stdin; writes one JSON line per report on stdout: `progress`
 * every few chunks, then one `done` (the stored file and the assembly's result), or `unplayable`
 * (NoPlayableRecording: nothing worth a retry). Anything else exits with code 1 and the error on
 * stderr. It imports only the assembly and the storage: no database, no other service. The data keys
 * of the session's institute come with the request (on stdin, never on disk): the chunks are opened
 * with them and the recording is sealed with the current one.
 */
import fs from 'node:fs';
import type { StorageConfig } from '../../config/config.ts';
import { type KeyringSnapshot, keyringOf } from '../../storage/keyring.ts';
import { createSealingStorage } from '../../storage/sealing.ts';
import type { ObjectStore, Storage, StoredObject } from '../../storage/storage.ts';
import { StorageMissing } from '../../storage/storage.ts';
import { type AssembleResult, assembleRecording, type ChunkRef, NoPlayableRecording } from './assemble.ts';

/** What the parent sends. */
export interface FinalizeRequest {
  readonly chunks: readonly ChunkRef[];
  readonly startedAt: number;
  readonly endedAt: number | null;
  readonly gapThresholdMs: number;
  readonly outputPath: string;
  readonly storage: StorageConfig;
  /** The data keys of the session's institute (DataKeysService.snapshot). */
  readonly keys: KeyringSnapshot;
}

/** What the child reports, one per stdout line. */
export type FinalizeReport =
  | { readonly type: 'progress'; readonly done: number }
  | {
      readonly type: 'done';
      readonly result: AssembleResult;
      readonly stored: StoredObject;
      /** The child's peak resident set size (VmHWM), bytes. */
      readonly peakRss: number;
    }
  | { readonly type: 'unplayable'; readonly message: string; readonly peakRss: number };

/** The child's own peak resident size (VmHWM), in bytes; the current RSS where /proc is missing. */
function peakRss(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb !== undefined) return Number(kb) * 1024;
  } catch {
    // Not Linux: the current size is the best there is.
  }
  return process.memoryUsage().rss;
}

async function storageFor(config: StorageConfig, keys: KeyringSnapshot): Promise<Storage> {
  const store: ObjectStore =
    config.kind === 'local'
      ? (await import('../../storage/local.ts')).createLocalStorage(config.root)
      : (await import('../../storage/s3.ts')).createS3Storage(config);
  return createSealingStorage(store, keyringOf(keys));
}

/** A whole chunk in the pieces the storage gives, or undefined when its object is gone. */
async function readChunk(storage: Storage, key: string): Promise<Buffer[] | undefined> {
  let stream;
  try {
    stream = await storage.get(key);
  } catch (error) {
    if (error instanceof StorageMissing) return undefined;
    throw error;
  }
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(piece as Buffer);
  return pieces;
}

function report(line: FinalizeReport): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(`${JSON.stringify(line)}\n`, (error) => (error ? reject(error) : resolve()));
  });
}

async function readRequest(): Promise<FinalizeRequest> {
  const pieces: Buffer[] = [];
  for await (const piece of process.stdin) pieces.push(piece as Buffer);
  return JSON.parse(Buffer.concat(pieces).toString('utf8')) as FinalizeRequest;
}

async function main(): Promise<void> {
  const request = await readRequest();
  const storage = await storageFor(request.storage, request.keys);
  try {
    let result: AssembleResult;
    try {
      result = await assembleRecording({
        chunks: request.chunks,
        read: (chunk) => readChunk(storage, chunk.storageKey),
        startedAt: request.startedAt,
        endedAt: request.endedAt,
        outputPath: request.outputPath,
        gapThresholdMs: request.gapThresholdMs,
        progress: (done) => report({ type: 'progress', done }),
      });
    } catch (error) {
      if (!(error instanceof NoPlayableRecording)) throw error;
      await report({ type: 'unplayable', message: error.message, peakRss: peakRss() });
      return;
    }
    const stored = await storage.put(fs.createReadStream(request.outputPath), {
      institute: request.keys.institute,
    });
    await report({ type: 'done', result, stored, peakRss: peakRss() });
  } finally {
    await fs.promises.rm(request.outputPath, { force: true });
  }
}

try {
  await main();
  // Open sockets (an S3 client's keep-alive) would keep the process alive: its work is done.
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`, () =>
    process.exit(1),
  );
}
