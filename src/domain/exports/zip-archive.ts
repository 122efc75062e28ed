import crypto from 'node:crypto';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { ZipFile } from 'yazl';

/** One file to write into the archive, read only when the archive reaches it. */
export interface ArchiveEntry {
  /** Path inside the archive (forward slashes, relative, already safe). */
  readonly path: string;
  /**
   * The bytes the record promises; a stream that differs fails the archive. Undefined for a file
   * the job makes itself (a report), whose size and SHA-256 are only known once written.
   */
  readonly size: number | undefined;
  readonly sha256: string | undefined;
  /** Told the size and SHA-256 of the bytes written, once the entry is complete. */
  readonly measured?: (size: number, sha256: string) => void;
  /** Deflate (true) or store as is (false). */
  readonly compress: boolean;
  readonly modifiedAt: Date;
  /** Names the file in an error message (no path of the storage, nothing secret). */
  readonly describe: string;
  /** Opens the bytes; called once, when the entry before it has been written. */
  open(): Promise<Readable>;
}

/** A small file the archive makes itself (an index), written after every stored file. */
export interface GeneratedEntry {
  /** Path inside the archive. */
  readonly path: string;
  /** Its bytes, made once every stored file has been written and checked. */
  content(): Buffer;
}

export interface ArchiveOptions {
  readonly entries: readonly ArchiveEntry[];
  /** Written last, in this order (`students.csv`, then `manifest.json`), each deflated. */
  readonly generated: readonly GeneratedEntry[];
  readonly generatedModifiedAt: Date;
  /**
   * Called before entry `index` is opened (and with `entries.length` before the generated files);
   * a rejection fails the archive. Progress reports go here.
   */
  beforeEntry(index: number): Promise<void>;
  /** Aborting it fails the archive at once with the signal's reason. */
  readonly signal: AbortSignal;
}

/**
 * Checks a file's bytes against its record while they stream by: fails at the end when the size or
 * the SHA-256 differs, so an archive never carries a file that is not the one recorded. A file
 * without a record (made by the job) is measured instead, and its `measured` told the result.
 */
class RecordCheck extends Transform {
  readonly #hash = crypto.createHash('sha256');
  #size = 0;
  readonly #entry: ArchiveEntry;

  constructor(entry: ArchiveEntry) {
    super();
    this.#entry = entry;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#size += chunk.length;
    this.#hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    const sha256 = this.#hash.digest('hex');
    const { size: expectedSize, sha256: expectedSha256 } = this.#entry;
    const checked = expectedSize !== undefined || expectedSha256 !== undefined;
    if (checked && (this.#size !== expectedSize || sha256 !== expectedSha256)) {
      done(new Error(`${this.#entry.describe} does not match its record (size or SHA-256 differs)`));
      return;
    }
    this.#entry.measured?.(this.#size, sha256);
    done();
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

/**
 * Streams a zip of `entries` followed by the `generated` files (the index and the manifest). Nothing is buffered beyond the streams'
 * own buffers: each file is opened only when the one before it has been written, and the archive
 * advances only as fast as its reader consumes it (yazl pipes with backpressure). Sizes beyond
 * 4 GiB use ZIP64 on their own.
 *
 * Returns the archive as a stream. Any failure (a file that cannot be opened or breaks off, bytes
 * that do not match their record, `beforeEntry` rejecting, the signal aborting) destroys the stream
 * with that error, so whoever consumes it (a storage put) fails and keeps nothing.
 */
export function streamArchive(options: ArchiveOptions): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream;
  if (!(output instanceof PassThrough)) throw new Error('yazl no longer writes to a PassThrough stream');
  const { signal, entries } = options;
  let failed = false;
  let reading: Readable | undefined;

  const fail = (reason: unknown) => {
    if (failed) return;
    failed = true;
    reading?.destroy();
    output.destroy(asError(reason));
  };
  const onAbort = () => fail(signal.reason);
  zip.on('error', fail);
  signal.addEventListener('abort', onAbort, { once: true });
  output.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    // The reader gave up (a storage put failing): release the file being read.
    reading?.destroy();
  });

  async function openEntry(index: number, entry: ArchiveEntry): Promise<Readable> {
    await options.beforeEntry(index);
    signal.throwIfAborted();
    const source = await entry.open();
    if (failed) {
      // The archive failed while this file was being opened: nothing will read it.
      source.on('error', () => undefined);
      source.destroy();
      throw new Error('the archive failed');
    }
    const check = new RecordCheck(entry);
    source.once('error', (error) => fail(new Error(`${entry.describe} could not be read: ${error.message}`)));
    check.once('error', fail);
    reading = source;
    return source.pipe(check);
  }

  for (const [index, entry] of entries.entries()) {
    zip.addReadStreamLazy(
      entry.path,
      {
        compress: entry.compress,
        mtime: entry.modifiedAt,
        ...(entry.size === undefined ? {} : { size: entry.size }),
      },
      (callback) => {
        if (failed) return;
        openEntry(index, entry).then((stream) => callback(null, stream), fail);
      },
    );
  }
  for (const [index, generated] of options.generated.entries()) {
    zip.addReadStreamLazy(
      generated.path,
      { compress: true, mtime: options.generatedModifiedAt },
      (callback) => {
        if (failed) return;
        const ready = index === 0 ? options.beforeEntry(entries.length) : Promise.resolve();
        ready.then(() => generated.content()).then((body) => callback(null, Readable.from([body])), fail);
      },
    );
  }
  zip.end();
  return output;
}
