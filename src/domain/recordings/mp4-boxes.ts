/**
 * Splits a stream of fragmented-MP4 bytes (ISO BMFF, as Safari's MediaRecorder writes them) into
 * its units: an init segment (ftyp + moov: a recorder starting, so a new segment) and fragments
 * (moof + mdat). Bytes come in pieces of any size (a box may span chunks); only the box being read
 * is held. After a discontinuity (a chunk missing or cut short) the box in progress is dropped and
 * the reader searches forward for the next box a recorder starts with (ftyp, styp or moof).
 */

/** What the reader reports. */
export interface Mp4BoxHandler {
  /** A recorder's init segment (ftyp and moov, joined). */
  init(bytes: Uint8Array): void;
  /** A fragment (moof and its mdat, joined). */
  fragment(bytes: Uint8Array): void;
}

/** Box types a unit may start with, which a resync looks for. */
const SYNC_TYPES = new Set(['ftyp', 'styp', 'moof']);
/** Top-level boxes a recorder writes; anything else at the top level means the stream is lost. */
const TOP_LEVEL = new Set(['ftyp', 'styp', 'moov', 'moof', 'mdat', 'free', 'skip', 'sidx', 'mfra', 'uuid']);
/** No unit a recorder writes in one chunk comes near this (bytes): a larger size is corruption. */
const MAX_BOX_BYTES = 256 * 1024 * 1024;

/** Whether these first bytes are ISO BMFF as a recorder starts it (a box named ftyp, styp or moof). */
export function looksLikeMp4(head: Uint8Array): boolean {
  if (head.length < 8) return false;
  const type = String.fromCharCode(head[4] ?? 0, head[5] ?? 0, head[6] ?? 0, head[7] ?? 0);
  return SYNC_TYPES.has(type);
}

/** See the file's comment. */
export class Mp4BoxReader {
  /** Places where the stream did not parse and the reader searched forward. */
  resyncs = 0;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private searching = false;
  private ftyp: Uint8Array | undefined;
  private moof: Uint8Array | undefined;

  private readonly handler: Mp4BoxHandler;

  constructor(handler: Mp4BoxHandler) {
    this.handler = handler;
  }

  /** Reads the next piece of the stream. Returns nothing; throws what a handler throws. */
  push(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    this.drain();
  }

  /** Forgets the box in progress: the bytes that follow do not continue it. Returns nothing. */
  discontinuity(): void {
    if (this.pendingBytes > 0 || this.moof !== undefined) this.searching = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.moof = undefined;
  }

  private joined(): Uint8Array {
    if (this.pending.length === 1 && this.pending[0] !== undefined) return this.pending[0];
    const all = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const piece of this.pending) {
      all.set(piece, at);
      at += piece.length;
    }
    this.pending = [all];
    return all;
  }

  private keep(rest: Uint8Array): void {
    this.pending = rest.length === 0 ? [] : [rest];
    this.pendingBytes = rest.length;
  }

  private drain(): void {
    for (;;) {
      if (this.pendingBytes < 8) return;
      const bytes = this.joined();
      if (this.searching) {
        const at = findSync(bytes);
        if (at < 0) {
          // Keep the last 7 bytes: a box header may begin there.
          this.keep(bytes.subarray(Math.max(0, bytes.length - 7)));
          return;
        }
        this.searching = false;
        this.resyncs += 1;
        this.keep(bytes.subarray(at));
        continue;
      }
      const header = boxHeader(bytes);
      if (header === undefined) {
        this.lose();
        continue;
      }
      if (bytes.length < header.size) return;
      this.keep(bytes.subarray(header.size));
      this.take(header.type, bytes.subarray(0, header.size));
    }
  }

  /** The stream does not parse here: search forward from the next byte. */
  private lose(): void {
    this.moof = undefined;
    this.searching = true;
    const bytes = this.joined();
    this.keep(bytes.subarray(1));
    // The sync search counts it once it finds the next box.
  }

  private take(type: string, box: Uint8Array): void {
    if (type === 'ftyp') {
      this.ftyp = box.slice();
      this.moof = undefined;
      return;
    }
    if (type === 'moov') {
      const ftyp = this.ftyp ?? new Uint8Array();
      this.handler.init(concat([ftyp, box]));
      this.moof = undefined;
      return;
    }
    if (type === 'moof') {
      this.moof = box.slice();
      return;
    }
    if (type === 'mdat' && this.moof !== undefined) {
      const moof = this.moof;
      this.moof = undefined;
      this.handler.fragment(concat([moof, box]));
    }
  }
}

/** A box's type and whole size, or undefined when the bytes are no plausible box header. */
function boxHeader(bytes: Uint8Array): { type: string; size: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(bytes[4] ?? 0, bytes[5] ?? 0, bytes[6] ?? 0, bytes[7] ?? 0);
  if (!TOP_LEVEL.has(type)) return undefined;
  let size = view.getUint32(0);
  if (size === 1) {
    if (bytes.length < 16) return { type, size: 16 }; // wait for the large size
    size = Number(view.getBigUint64(8));
  }
  if (size < 8 || size > MAX_BOX_BYTES) return undefined;
  return { type, size };
}

/** Where the next box a unit starts with begins, or −1. */
function findSync(bytes: Uint8Array): number {
  for (let at = 0; at + 8 <= bytes.length; at += 1) {
    const type = String.fromCharCode(
      bytes[at + 4] ?? 0,
      bytes[at + 5] ?? 0,
      bytes[at + 6] ?? 0,
      bytes[at + 7] ?? 0,
    );
    if (!SYNC_TYPES.has(type)) continue;
    if (boxHeader(bytes.subarray(at)) !== undefined) return at;
  }
  return -1;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}
