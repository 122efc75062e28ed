/**
 * A push parser for the WebM byte stream MediaRecorder produces, fed one stored chunk at a time.
 *
 * The room's chunks cut that stream at arbitrary bytes (a block may start in one chunk and end in
 * the next), so the parser carries the incomplete element over to the next push. It keeps no more
 * than one element in memory, never the recording. Damage is expected: a missing chunk or one cut
 * short is announced with `discontinuity()`, and anything that does not parse makes the parser
 * search forward for the next Cluster (MediaRecorder starts one at every key frame, about every
 * 2 s) or the next EBML header (a page reload's new recorder). Video after damage is held back
 * until its next key frame, so no frame refers to one that was lost.
 */

import { WEBM_ID } from './webm-ids.ts';

/** A track of a segment, as its Tracks element describes it. */
export interface WebmTrack {
  readonly number: number;
  readonly type: 'video' | 'audio';
  /** Matroska codec id, e.g. `V_VP8`, `A_OPUS`. */
  readonly codecId: string;
  readonly codecPrivate: Uint8Array | undefined;
  readonly width: number;
  readonly height: number;
  readonly sampleRate: number;
  readonly channels: number;
}

/** What a segment's header says: its time unit and its tracks. */
export interface WebmHeader {
  /** Nanoseconds per timecode tick (1,000,000 for MediaRecorder: milliseconds). */
  readonly timecodeScale: number;
  readonly tracks: readonly WebmTrack[];
}

/** One coded frame, timed in milliseconds from its segment's zero. */
export interface WebmFrame {
  readonly track: number;
  readonly timestampMs: number;
  readonly key: boolean;
  readonly data: Uint8Array;
}

/** Where the parser's findings go. */
export interface WebmSink {
  /**
   * A new segment begins (an EBML header, or timecodes starting over after damage: then the last
   * header is given again). Frames that follow belong to it.
   */
  segment(header: WebmHeader): void;
  frame(frame: WebmFrame): void;
}

const ID = WEBM_ID;

/** Elements read whole and interpreted. */
const READ_WHOLE = new Set<number>([ID.EBML, ID.Info, ID.Tracks, ID.Timecode, ID.SimpleBlock, ID.BlockGroup]);
/** Elements skipped over (their size known). */
const SKIPPED = new Set<number>([
  ID.SeekHead,
  ID.Cues,
  ID.Tags,
  ID.Chapters,
  ID.Attachments,
  ID.Void,
  ID.CRC32,
  ID.PrevSize,
  ID.Position,
]);
/** Elements entered: their children follow (their size may be unknown). */
const ENTERED = new Set<number>([ID.Segment, ID.Cluster]);

/** No element the parser reads whole is larger than this; a larger size means damage. */
const MAX_ELEMENT_BYTES = 32 * 1024 * 1024;
/** Timecodes going back by more than this (ms) mean a new recorder: a segment whose header was lost. */
const RESTART_BACKWARDS_MS = 1000;
/** Bytes kept across pushes while searching for a resynchronisation point. */
const SEARCH_TAIL = 16;

interface Vint {
  readonly value: number;
  readonly length: number;
  /** All value bits set: the unknown-size marker. */
  readonly unknown: boolean;
}

/** Reads an EBML variable-size integer at `at` (marker removed unless `raw`), or undefined when incomplete or invalid. */
function readVint(bytes: Uint8Array, at: number, raw: boolean): Vint | undefined | null {
  if (at >= bytes.length) return undefined;
  const first = bytes[at] ?? 0;
  if (first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (at + length > bytes.length) return undefined;
  const mask = 0xff >> length;
  let value = raw ? first : first & mask;
  let unknown = (first & mask) === mask;
  for (let index = 1; index < length; index += 1) {
    const byte = bytes[at + index] ?? 0;
    value = value * 256 + byte;
    if (byte !== 0xff) unknown = false;
  }
  return { value, length, unknown: unknown && !raw };
}

function readUint(bytes: Uint8Array): number {
  let value = 0;
  for (const byte of bytes) value = value * 256 + byte;
  return value;
}

function readFloat(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length === 4) return view.getFloat32(0);
  if (bytes.length === 8) return view.getFloat64(0);
  return 0;
}

/** The children of a master element's body, as [id, body] pairs; stops at the first malformed one. */
function children(body: Uint8Array): [number, Uint8Array][] {
  const found: [number, Uint8Array][] = [];
  let at = 0;
  while (at < body.length) {
    const id = readVint(body, at, true);
    if (!id) break;
    const size = readVint(body, at + id.length, false);
    if (!size || size.unknown) break;
    const start = at + id.length + size.length;
    if (start + size.value > body.length) break;
    found.push([id.value, body.subarray(start, start + size.value)]);
    at = start + size.value;
  }
  return found;
}

function trackOf(body: Uint8Array): WebmTrack | undefined {
  let number = 0;
  let type = 0;
  let codecId = '';
  let codecPrivate: Uint8Array | undefined;
  let width = 0;
  let height = 0;
  let sampleRate = 0;
  let channels = 1;
  for (const [id, value] of children(body)) {
    if (id === ID.TrackNumber) number = readUint(value);
    else if (id === ID.TrackType) type = readUint(value);
    else if (id === ID.CodecID) codecId = new TextDecoder().decode(value).replace(/\0+$/, '');
    else if (id === ID.CodecPrivate) codecPrivate = value.slice();
    else if (id === ID.Video) {
      for (const [videoId, videoValue] of children(value)) {
        if (videoId === ID.PixelWidth) width = readUint(videoValue);
        if (videoId === ID.PixelHeight) height = readUint(videoValue);
      }
    } else if (id === ID.Audio) {
      for (const [audioId, audioValue] of children(value)) {
        if (audioId === ID.SamplingFrequency) sampleRate = readFloat(audioValue);
        if (audioId === ID.Channels) channels = readUint(audioValue);
      }
    }
  }
  if (number === 0 || (type !== 1 && type !== 2)) return undefined;
  return {
    number,
    type: type === 1 ? 'video' : 'audio',
    codecId,
    codecPrivate,
    width,
    height,
    sampleRate,
    channels,
  };
}

/** The WebM stream parser; see the file's comment. */
export class WebmReader {
  private readonly sink: WebmSink;
  /** Bytes received and not yet consumed (at most one element, or the search tail). */
  private pending: Uint8Array = new Uint8Array(0);
  /** Bytes of a skipped element still to come. */
  private skip = 0;
  private searching = false;
  private timecodeScale = 1_000_000;
  private header: WebmHeader | undefined;
  private clusterTimecode = 0;
  private lastClusterTimecode: number | undefined;
  /** Video tracks that lost data and wait for a key frame. */
  private readonly waitingForKey = new Set<number>();
  /** Elements the parser gave up on (damage seen in the stream itself). */
  resyncs = 0;

  constructor(sink: WebmSink) {
    this.sink = sink;
  }

  /** The header of the segment being read, once one was seen. */
  get currentHeader(): WebmHeader | undefined {
    return this.header;
  }

  /** Feeds the next bytes of the stream. Throws nothing; damage makes it search forward. */
  push(bytes: Uint8Array): void {
    let data = bytes;
    if (this.skip > 0) {
      const skipped = Math.min(this.skip, data.length);
      this.skip -= skipped;
      data = data.subarray(skipped);
    }
    if (data.length === 0) return;
    const joined = this.pending.length === 0 ? data : concat(this.pending, data);
    const rest = this.consume(joined);
    // Copied, so a pushed buffer is never held beyond the element it ends in.
    this.pending = rest.length === 0 ? new Uint8Array(0) : rest.slice();
  }

  /** Bytes between the last push and the next are missing: what was incomplete is dropped. */
  discontinuity(): void {
    this.pending = new Uint8Array(0);
    this.skip = 0;
    this.searching = true;
    this.holdVideo();
  }

  /** True when the next bytes start a new recorder's stream (an EBML header). */
  static startsSegment(bytes: Uint8Array): boolean {
    return bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3;
  }

  private holdVideo(): void {
    for (const track of this.header?.tracks ?? []) {
      if (track.type === 'video') this.waitingForKey.add(track.number);
    }
  }

  /** Parses what it can of `bytes`. Returns the unconsumed rest. */
  private consume(bytes: Uint8Array): Uint8Array {
    let at = 0;
    while (at < bytes.length) {
      if (this.searching) {
        const found = this.search(bytes, at);
        if (found === undefined) return bytes.subarray(Math.max(at, bytes.length - SEARCH_TAIL));
        at = found;
        this.searching = false;
      }
      const id = readVint(bytes, at, true);
      if (id === undefined) return bytes.subarray(at);
      const size = id === null ? null : readVint(bytes, at + id.length, false);
      if (size === undefined) return bytes.subarray(at);
      if (id === null || size === null || !this.plausible(id.value, size)) {
        // Past this byte, so a header that looks like a resynchronisation point but is not one
        // (an EBML header of unknown size) cannot be found again here.
        this.damaged();
        at += 1;
        continue;
      }
      const start = at + id.length + size.length;
      if (ENTERED.has(id.value)) {
        at = start;
        continue;
      }
      if (SKIPPED.has(id.value)) {
        const end = start + size.value;
        if (end <= bytes.length) {
          at = end;
          continue;
        }
        this.skip = end - bytes.length;
        return new Uint8Array(0);
      }
      const end = start + size.value;
      if (end > bytes.length) return bytes.subarray(at);
      if (!this.element(id.value, bytes.subarray(start, end))) {
        this.damaged();
        at += 1;
        continue;
      }
      at = end;
    }
    return new Uint8Array(0);
  }

  /** Whether an element header looks like one of MediaRecorder's. */
  private plausible(id: number, size: Vint): boolean {
    if (ENTERED.has(id)) return true;
    if (size.unknown) return false;
    if (SKIPPED.has(id)) return size.value <= MAX_ELEMENT_BYTES;
    return READ_WHOLE.has(id) && size.value <= MAX_ELEMENT_BYTES;
  }

  private damaged(): void {
    this.resyncs += 1;
    this.searching = true;
    this.holdVideo();
  }

  /**
   * Where the next Cluster (followed by its Timecode) or EBML header starts in `bytes` from `from`.
   * Returns the position, or undefined when neither is there yet.
   */
  private search(bytes: Uint8Array, from: number): number | undefined {
    for (let at = from; at + 4 <= bytes.length; at += 1) {
      const byte = bytes[at];
      if (byte === 0x1a && WebmReader.startsSegment(bytes.subarray(at, at + 4))) return at;
      if (byte !== 0x1f || bytes[at + 1] !== 0x43 || bytes[at + 2] !== 0xb6 || bytes[at + 3] !== 0x75)
        continue;
      const size = readVint(bytes, at + 4, false);
      if (size === undefined) return undefined;
      if (size === null) continue;
      const next = at + 4 + size.length;
      if (next >= bytes.length) return undefined;
      if (bytes[next] === ID.Timecode) return at;
    }
    return undefined;
  }

  /** Interprets a whole element. Returns false when it does not make sense (damage). */
  private element(id: number, body: Uint8Array): boolean {
    switch (id) {
      case ID.EBML:
        this.header = undefined;
        this.lastClusterTimecode = undefined;
        this.waitingForKey.clear();
        this.timecodeScale = 1_000_000;
        return true;
      case ID.Info:
        for (const [child, value] of children(body)) {
          if (child === ID.TimecodeScale) this.timecodeScale = readUint(value) || 1_000_000;
        }
        return true;
      case ID.Tracks: {
        const tracks = children(body)
          .filter(([child]) => child === ID.TrackEntry)
          .map(([, value]) => trackOf(value))
          .filter((track): track is WebmTrack => track !== undefined);
        if (tracks.length === 0) return false;
        this.header = { timecodeScale: this.timecodeScale, tracks };
        this.sink.segment(this.header);
        return true;
      }
      case ID.Timecode: {
        if (body.length > 8) return false;
        const timecode = readUint(body);
        const last = this.lastClusterTimecode;
        const scale = this.timecodeScale / 1_000_000;
        if (
          this.header !== undefined &&
          last !== undefined &&
          (last - timecode) * scale > RESTART_BACKWARDS_MS
        ) {
          // A new recorder whose header was lost: same tracks, time from zero again.
          this.sink.segment(this.header);
          this.holdVideo();
        }
        this.clusterTimecode = timecode;
        this.lastClusterTimecode = timecode;
        return true;
      }
      case ID.SimpleBlock:
        return this.block(body, (body[this.trackLength(body)] ?? 0) & 0x80 ? true : false);
      case ID.BlockGroup: {
        let block: Uint8Array | undefined;
        let referenced = false;
        for (const [child, value] of children(body)) {
          if (child === ID.Block) block = value;
          if (child === ID.ReferenceBlock) referenced = true;
        }
        return block === undefined ? false : this.block(block, !referenced);
      }
      default:
        return false;
    }
  }

  /** The length of a block's track number (plus the 2-byte timecode: the flags' offset). */
  private trackLength(block: Uint8Array): number {
    const track = readVint(block, 0, false);
    return (track ? track.length : 1) + 2;
  }

  private block(block: Uint8Array, key: boolean): boolean {
    const header = this.header;
    if (header === undefined) return true; // no header yet (its chunk was lost): nothing can be decoded
    const track = readVint(block, 0, false);
    if (!track || block.length < track.length + 3) return false;
    const info = header.tracks.find((candidate) => candidate.number === track.value);
    if (info === undefined) return false;
    const flags = block[track.length + 2] ?? 0;
    // Laced blocks are not something MediaRecorder writes; treated as damage rather than misread.
    if ((flags & 0x06) !== 0) return false;
    const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
    const relative = view.getInt16(track.length);
    const timestampMs = ((this.clusterTimecode + relative) * header.timecodeScale) / 1_000_000;
    if (info.type === 'video' && this.waitingForKey.has(info.number)) {
      if (!key) return true;
      this.waitingForKey.delete(info.number);
    }
    this.sink.frame({
      track: info.number,
      timestampMs,
      key: info.type === 'audio' ? true : key,
      // A view, not a copy: the pushed bytes it lies in live as long as the frame is waited for.
      data: block.subarray(track.length + 3),
    });
    return true;
  }
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first, 0);
  joined.set(second, first.length);
  return joined;
}
