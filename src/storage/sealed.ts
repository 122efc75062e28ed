import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * The sealed-object format (docs/storage.md, "Encryption at rest"): what the storage keeps for every
 * object written since step 19.
 *
 * ```
 * header (40 bytes)
 *   0  8  magic "INVGENC1" (no media signature starts so)
 *   8  4  institute id, unsigned big-endian
 *  12  4  data-key version
 *  16  4  segment size S (plaintext bytes per segment)
 *  20 16  random salt: the object key is HKDF-SHA256(data key, salt, "invigil:object")
 *  36  4  zero (reserved)
 * segments: AES-256-GCM of S plaintext bytes each (the last 0..S), each followed by its 16-byte tag
 * ```
 *
 * Segment i is sealed under the object key with the nonce 8 zero bytes ‖ i (big-endian), and the
 * header plus one byte (1 for the last segment, else 0) as additional data: a changed header, a
 * reordered, dropped or altered segment and a cut-off object all fail to open. An empty object is
 * one empty last segment. A fresh key per object (its random salt) keeps the segment nonces unique.
 */

export const MAGIC = Buffer.from('INVGENC1', 'latin1');
export const HEADER_BYTES = 40;
export const TAG_BYTES = 16;
/** The segment size of a streamed object: bounded memory both ways, a range reads at most one more. */
export const STREAM_SEGMENT_BYTES = 64 * 1024;
/** No header may ask a reader to hold more than this (a whole small chunk is one segment). */
export const MAX_SEGMENT_BYTES = 4 * 1024 * 1024;

/** Which data key sealed an object. */
export interface KeyRef {
  readonly institute: number;
  readonly version: number;
}

/** A data key: 32 bytes and where it belongs. */
export interface DataKey extends KeyRef {
  readonly key: Buffer;
}

/** What an object's header says. */
export interface SealHeader extends KeyRef {
  readonly segmentBytes: number;
  readonly salt: Buffer;
  /** The 40 bytes themselves (part of every segment's additional data). */
  readonly bytes: Buffer;
}

/** A sealed object does not open: altered, cut off or written under another key. */
export class SealBroken extends Error {
  override name = 'SealBroken';
}

/** True when `head` begins as a sealed object does (an object stored before step 19 does not). */
export function isSealed(head: Buffer): boolean {
  return head.length >= MAGIC.length && head.subarray(0, MAGIC.length).equals(MAGIC);
}

/** A new header for an object sealed under `key` in segments of `segmentBytes`. Returns it. */
export function newHeader(key: KeyRef, segmentBytes: number): SealHeader {
  const bytes = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(bytes, 0);
  bytes.writeUInt32BE(key.institute, 8);
  bytes.writeUInt32BE(key.version, 12);
  bytes.writeUInt32BE(segmentBytes, 16);
  const salt = crypto.randomBytes(16);
  salt.copy(bytes, 20);
  return { institute: key.institute, version: key.version, segmentBytes, salt, bytes };
}

/** Reads a header. Returns it; throws SealBroken for one no sealer writes. */
export function parseHeader(bytes: Buffer): SealHeader {
  if (bytes.length < HEADER_BYTES || !isSealed(bytes)) throw new SealBroken('not a sealed object');
  const header = bytes.subarray(0, HEADER_BYTES);
  const segmentBytes = header.readUInt32BE(16);
  if (segmentBytes < 1 || segmentBytes > MAX_SEGMENT_BYTES || header.readUInt32BE(36) !== 0) {
    throw new SealBroken('sealed object header is damaged');
  }
  return {
    institute: header.readUInt32BE(8),
    version: header.readUInt32BE(12),
    segmentBytes,
    salt: Buffer.from(header.subarray(20, 36)),
    bytes: Buffer.from(header),
  };
}

/**
 * Data keys as key objects, made once per key: deriving from, and ciphering under, a key object
 * skips the copy and checks node:crypto makes of a raw key on every call (about a third of the
 * sealing's cost for a recording chunk).
 */
const keyObjects = new WeakMap<Buffer, crypto.KeyObject>();

function keyObjectOf(dataKey: Buffer): crypto.KeyObject {
  let made = keyObjects.get(dataKey);
  if (made === undefined) {
    made = crypto.createSecretKey(dataKey);
    keyObjects.set(dataKey, made);
  }
  return made;
}

/** The key segments of one object are sealed under. */
function objectKey(dataKey: Buffer, header: SealHeader): crypto.KeyObject {
  const derived = crypto.hkdfSync('sha256', keyObjectOf(dataKey), header.salt, 'invigil:object', 32);
  return crypto.createSecretKey(new Uint8Array(derived));
}

function nonceOf(index: number): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(index, 8);
  return nonce;
}

/** The additional data of a segment: the header, then 1 for the last segment or 0. */
function additionalData(header: SealHeader): { middle: Buffer; last: Buffer } {
  return {
    middle: Buffer.concat([header.bytes, Buffer.from([0])]),
    last: Buffer.concat([header.bytes, Buffer.from([1])]),
  };
}

/** Bytes a sealed object of `plainBytes` takes in segments of `segmentBytes`. */
export function sealedSize(plainBytes: number, segmentBytes: number): number {
  const segments = Math.max(1, Math.ceil(plainBytes / segmentBytes));
  return HEADER_BYTES + plainBytes + segments * TAG_BYTES;
}

/** The plaintext size of a sealed object of `sealedBytes`. Throws SealBroken for an impossible size. */
export function plainSize(sealedBytes: number, segmentBytes: number): number {
  const body = sealedBytes - HEADER_BYTES;
  const segments = Math.ceil(body / (segmentBytes + TAG_BYTES));
  const plain = body - segments * TAG_BYTES;
  if (body < TAG_BYTES || plain < 0 || sealedSize(plain, segmentBytes) !== sealedBytes) {
    throw new SealBroken('sealed object is cut off');
  }
  return plain;
}

/**
 * Seals bytes held in memory as one object in ONE segment (one cipher, no copy of the plaintext):
 * the recording-chunk path's way. Returns the pieces to write, in order (header, ciphertext, tag).
 * `pieces` must total at most MAX_SEGMENT_BYTES.
 */
export function sealPieces(dataKey: DataKey, pieces: readonly Buffer[]): Buffer[] {
  let total = 0;
  for (const piece of pieces) total += piece.length;
  const header = newHeader(dataKey, Math.max(1, total));
  const cipher = crypto.createCipheriv('aes-256-gcm', objectKey(dataKey.key, header), nonceOf(0));
  cipher.setAAD(additionalData(header).last);
  const out: Buffer[] = [header.bytes];
  for (const piece of pieces) out.push(cipher.update(piece));
  const final = cipher.final();
  if (final.length > 0) out.push(final);
  out.push(cipher.getAuthTag());
  return out;
}

/** Seals one segment. Returns its ciphertext and tag as one buffer. */
function sealSegment(key: crypto.KeyObject, aad: Buffer, index: number, plain: Buffer): Buffer {
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonceOf(index));
  cipher.setAAD(aad);
  const body = cipher.update(plain);
  cipher.final();
  return Buffer.concat([body, cipher.getAuthTag()]);
}

/** Opens one segment (ciphertext and tag). Returns the plaintext; throws SealBroken. */
function openSegment(key: crypto.KeyObject, aad: Buffer, index: number, sealed: Buffer): Buffer {
  if (sealed.length < TAG_BYTES) throw new SealBroken('sealed object is cut off');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, nonceOf(index));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const body = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    throw new SealBroken(`segment ${index} of a sealed object does not open (altered, or another key)`);
  }
  return body;
}

/** Takes `length` bytes off the front of a list of buffers. */
function take(pending: Buffer[], length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const first = pending[0] as Buffer;
    const wanted = length - filled;
    if (first.length <= wanted) {
      first.copy(out, filled);
      filled += first.length;
      pending.shift();
    } else {
      first.copy(out, filled, 0, wanted);
      pending[0] = first.subarray(wanted);
      filled += wanted;
    }
  }
  return out;
}

/**
 * A transform that seals what flows through it (plaintext in, sealed object out) in segments of
 * STREAM_SEGMENT_BYTES, holding at most one segment plus one incoming piece.
 */
export class SealStream extends Transform {
  readonly #header: SealHeader;
  readonly #key: crypto.KeyObject;
  readonly #aad: { middle: Buffer; last: Buffer };
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #index = 0;

  constructor(dataKey: DataKey, segmentBytes = STREAM_SEGMENT_BYTES) {
    super();
    this.#header = newHeader(dataKey, segmentBytes);
    this.#key = objectKey(dataKey.key, this.#header);
    this.#aad = additionalData(this.#header);
    this.push(this.#header.bytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const size = this.#header.segmentBytes;
    // A full segment is sealed once more follows it: only then is it known not to be the last.
    while (this.#pendingBytes > size) {
      this.push(sealSegment(this.#key, this.#aad.middle, this.#index, take(this.#pending, size)));
      this.#pendingBytes -= size;
      this.#index += 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    const rest = take(this.#pending, this.#pendingBytes);
    this.push(sealSegment(this.#key, this.#aad.last, this.#index, rest));
    done();
  }
}

/**
 * A transform that opens a sealed object's segments (the header already read: `header`), from
 * segment `firstIndex` on, the segment `lastIndex` being the object's last (undefined: the one the
 * stream ends with). Of the plaintext it passes on bytes `skip` to `skip + length - 1` (undefined
 * length: all). Fails with SealBroken for an altered, reordered or cut-off object.
 */
export class OpenStream extends Transform {
  readonly #header: SealHeader;
  readonly #key: crypto.KeyObject;
  readonly #aad: { middle: Buffer; last: Buffer };
  readonly #lastIndex: number | undefined;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #index: number;
  #skip: number;
  #left: number;

  constructor(
    dataKey: Buffer,
    header: SealHeader,
    options: { firstIndex?: number; lastIndex?: number; skip?: number; length?: number } = {},
  ) {
    super();
    this.#header = header;
    this.#key = objectKey(dataKey, header);
    this.#aad = additionalData(header);
    this.#index = options.firstIndex ?? 0;
    this.#lastIndex = options.lastIndex;
    this.#skip = options.skip ?? 0;
    this.#left = options.length ?? Number.POSITIVE_INFINITY;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const sealedSegment = this.#header.segmentBytes + TAG_BYTES;
    try {
      // A full segment followed by more bytes is not the last one.
      while (this.#pendingBytes > sealedSegment) {
        if (this.#index === this.#lastIndex) throw new SealBroken('sealed object runs past its last segment');
        this.#emit(openSegment(this.#key, this.#aad.middle, this.#index, take(this.#pending, sealedSegment)));
        this.#pendingBytes -= sealedSegment;
        this.#index += 1;
      }
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    try {
      const rest = take(this.#pending, this.#pendingBytes);
      const last = this.#lastIndex === undefined || this.#index === this.#lastIndex;
      if (!last && rest.length !== this.#header.segmentBytes + TAG_BYTES) {
        throw new SealBroken('sealed object is cut off');
      }
      this.#emit(openSegment(this.#key, last ? this.#aad.last : this.#aad.middle, this.#index, rest));
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  }

  /** Passes on the wanted part of a segment's plaintext. */
  #emit(plain: Buffer): void {
    let part = plain;
    if (this.#skip > 0) {
      const skipped = Math.min(this.#skip, part.length);
      part = part.subarray(skipped);
      this.#skip -= skipped;
    }
    if (part.length > this.#left) part = part.subarray(0, this.#left);
    this.#left -= part.length;
    if (part.length > 0) this.push(part);
  }
}

/**
 * Where plaintext bytes `start` to `end` (included) of a sealed object of `sealedBytes` lie: the
 * sealed byte range covering their segments, the segment indexes, and how much of the first
 * segment's plaintext to skip. `end` is clamped to the object's last byte.
 */
export function sealedRange(
  header: SealHeader,
  sealedBytes: number,
  start: number,
  end: number,
): { from: number; to: number; firstIndex: number; lastIndex: number; skip: number; length: number } {
  const size = header.segmentBytes;
  const plain = plainSize(sealedBytes, size);
  const lastByte = Math.min(end, plain - 1);
  const firstIndex = Math.floor(start / size);
  const wantedLast = Math.floor(Math.max(lastByte, start) / size);
  const objectLast = Math.max(0, Math.ceil(plain / size) - 1);
  const segment = size + TAG_BYTES;
  return {
    from: HEADER_BYTES + firstIndex * segment,
    to: Math.min(HEADER_BYTES + (wantedLast + 1) * segment, sealedBytes) - 1,
    firstIndex,
    lastIndex: objectLast,
    skip: start - firstIndex * size,
    length: Math.max(0, lastByte - start + 1),
  };
}
