import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { PayloadTooLarge } from '../domain/errors.ts';

/**
 * A pass-through that counts, hashes and keeps the first bytes of what flows by, failing with
 * PayloadTooLarge once more than `maxBytes` have passed. With `inspect`, the first `headBytes`
 * bytes (fewer for a shorter stream) are handed to it once they have arrived; when it throws, the
 * stream fails with that error (so content can be judged while it is still arriving).
 */
export class Measure extends Transform {
  readonly hash = crypto.createHash('sha256');
  size = 0;
  readonly maxBytes: number;
  readonly headBytes: number;
  #head: Buffer[] = [];
  #headLength = 0;
  readonly #inspect: ((head: Buffer) => void) | undefined;

  constructor(maxBytes = Number.POSITIVE_INFINITY, headBytes = 0, inspect?: (head: Buffer) => void) {
    super();
    this.maxBytes = maxBytes;
    this.headBytes = headBytes;
    this.#inspect = inspect;
  }

  /** The first `headBytes` bytes seen. */
  get head(): Buffer {
    return Buffer.concat(this.#head).subarray(0, this.headBytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      done(new PayloadTooLarge('Payload Too Large'));
      return;
    }
    if (this.#headLength < this.headBytes) {
      this.#head.push(chunk);
      this.#headLength += chunk.length;
      if (this.#headLength >= this.headBytes && !this.#inspected(done)) return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.#headLength < this.headBytes && !this.#inspected(done)) return;
    done();
  }

  /** Runs `inspect` on the head; false (the stream failed through `done`) when it threw. */
  #inspected(done: TransformCallback): boolean {
    if (this.#inspect === undefined) return true;
    try {
      this.#inspect(this.head);
      return true;
    } catch (error) {
      done(error as Error);
      return false;
    }
  }
}
