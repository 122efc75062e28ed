import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { PayloadTooLarge } from '../domain/errors.ts';

/**
 * A pass-through that counts, hashes and keeps the first bytes of what flows by, failing with
 * PayloadTooLarge once more than `maxBytes` have passed.
 */
export class Measure extends Transform {
  readonly hash = crypto.createHash('sha256');
  size = 0;
  readonly maxBytes: number;
  readonly headBytes: number;
  #head: Buffer[] = [];
  #headLength = 0;

  constructor(maxBytes = Number.POSITIVE_INFINITY, headBytes = 0) {
    super();
    this.maxBytes = maxBytes;
    this.headBytes = headBytes;
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
    }
    this.hash.update(chunk);
    done(null, chunk);
  }
}
