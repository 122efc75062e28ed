import fs from 'node:fs';
import { WEBM_ID } from './webm-ids.ts';
import type { WebmTrack } from './webm-reader.ts';

/**
 * A small WebM (Matroska) muxer for already-coded frames: what the recording finalisation needs and
 * nothing more. The file is written through a file handle as it goes; only the cluster being built
 * and the clusters not yet written out are held (a few seconds of frames), plus one small entry per
 * seekable cluster for the Cues.
 *
 * Layout: EBML header; Segment (size patched at the end); SeekHead (space reserved with a Void,
 * written at the end) pointing at Info, Tracks and Cues; Info (TimecodeScale 1 ms, Duration patched
 * at the end); Tracks; Clusters of SimpleBlocks, a new one at every video key frame (or every
 * MAX_CLUSTER_MS); Cues, one CuePoint per cluster that starts with a video key frame.
 */

const ID = WEBM_ID;

/** Bytes reserved after the Segment's start for the SeekHead (three entries need 68). */
const SEEK_HEAD_SPACE = 96;
/** A cluster never spans more than this (ms), so block timecodes stay far inside int16. */
const MAX_CLUSTER_MS = 5000;
/** A cluster is closed early once it holds this many bytes. */
const MAX_CLUSTER_BYTES = 8 * 1024 * 1024;
const APP = 'Invigil';

/** The bytes of an element id (ids are written with their length marker). */
function idBytes(id: number): number[] {
  const bytes: number[] = [];
  for (let value = id; value > 0; value = Math.floor(value / 256)) bytes.unshift(value % 256);
  return bytes;
}

/** An EBML size of `length` bytes (1–8). */
function sizeBytes(size: number, length = sizeLength(size)): number[] {
  const bytes: number[] = [];
  let value = size;
  for (let index = 0; index < length; index += 1) {
    bytes.unshift(value % 256);
    value = Math.floor(value / 256);
  }
  bytes[0] = (bytes[0] ?? 0) | (0x80 >> (length - 1));
  return bytes;
}

/** The shortest size length for `size` (all-ones is the unknown-size marker, so avoided). */
function sizeLength(size: number): number {
  let length = 1;
  while (size >= 2 ** (7 * length) - 1) length += 1;
  return length;
}

function uintBytes(value: number, length?: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    bytes.unshift(rest % 256);
    rest = Math.floor(rest / 256);
  } while (rest > 0);
  while (length !== undefined && bytes.length < length) bytes.unshift(0);
  return bytes;
}

function float64Bytes(value: number): number[] {
  const buffer = Buffer.alloc(8);
  buffer.writeDoubleBE(value);
  return [...buffer];
}

/** An element with its body. */
function element(id: number, body: readonly number[] | Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([...idBytes(id), ...sizeBytes(body.length)]), Buffer.from(body)]);
}

function master(id: number, children: readonly Buffer[]): Buffer {
  return element(id, Buffer.concat(children));
}

function uint(id: number, value: number): Buffer {
  return element(id, uintBytes(value));
}

function text(id: number, value: string): Buffer {
  return element(id, Buffer.from(value, 'utf8'));
}

/** A Void element of exactly `total` bytes (at least 2). */
function voidOf(total: number): Buffer {
  const length = total - 1 > 128 ? 8 : 1;
  return Buffer.concat([
    Buffer.from([...idBytes(ID.Void), ...sizeBytes(total - 1 - length, length)]),
    Buffer.alloc(total - 1 - length),
  ]);
}

function trackEntry(track: WebmTrack): Buffer {
  const children = [
    uint(ID.TrackNumber, track.number),
    // Unique within the file, which is all a TrackUID has to be.
    uint(ID.TrackUID, track.number),
    uint(ID.TrackType, track.type === 'video' ? 1 : 2),
    uint(ID.FlagLacing, 0),
    text(ID.CodecID, track.codecId),
  ];
  if (track.codecPrivate !== undefined) children.push(element(ID.CodecPrivate, track.codecPrivate));
  if (track.type === 'video') {
    children.push(
      master(ID.Video, [uint(ID.PixelWidth, track.width || 640), uint(ID.PixelHeight, track.height || 480)]),
    );
  } else {
    children.push(
      master(ID.Audio, [
        element(ID.SamplingFrequency, float64Bytes(track.sampleRate || 48000)),
        uint(ID.Channels, track.channels || 1),
      ]),
    );
  }
  return master(ID.TrackEntry, children);
}

/** A frame waiting in the cluster being built. */
interface Pending {
  readonly track: number;
  readonly timestampMs: number;
  readonly key: boolean;
  readonly data: Uint8Array;
}

/** A seek point: a cluster that starts with a video key frame. */
interface Cue {
  readonly timeMs: number;
  readonly track: number;
  /** Relative to the Segment's data. */
  readonly clusterPosition: number;
}

/** Writes one WebM file; see the file's comment. */
export class WebmWriter {
  private readonly file: fs.promises.FileHandle;
  private readonly videoTrack: number | undefined;
  /** Where the Segment's size, its data, the SeekHead space and the Duration's value are. */
  private readonly segmentSizeAt: number;
  private readonly segmentDataAt: number;
  private readonly durationAt: number;
  private readonly infoPosition: number;
  private readonly tracksPosition: number;
  /** Bytes written or queued so far: where the next byte goes. */
  private position: number;
  /** Closed clusters not written out yet. */
  private queued: Buffer[] = [];
  private cluster: Pending[] = [];
  private clusterBytes = 0;
  private clusterMin = 0;
  private clusterMax = 0;
  private readonly cues: Cue[] = [];

  private constructor(
    file: fs.promises.FileHandle,
    tracks: readonly WebmTrack[],
    head: { segmentSizeAt: number; segmentDataAt: number; durationAt: number; info: number; tracks: number },
    position: number,
  ) {
    this.file = file;
    this.videoTrack = tracks.find((track) => track.type === 'video')?.number;
    this.segmentSizeAt = head.segmentSizeAt;
    this.segmentDataAt = head.segmentDataAt;
    this.durationAt = head.durationAt;
    this.infoPosition = head.info;
    this.tracksPosition = head.tracks;
    this.position = position;
  }

  /**
   * Creates (or truncates) the file at `path` and writes its header for `tracks` (numbers as the
   * frames will name them). Returns the writer; throws what the file system throws.
   */
  static async open(path: string, tracks: readonly WebmTrack[]): Promise<WebmWriter> {
    const ebml = master(ID.EBML, [
      uint(ID.EBMLVersion, 1),
      uint(ID.EBMLReadVersion, 1),
      uint(ID.EBMLMaxIDLength, 4),
      uint(ID.EBMLMaxSizeLength, 8),
      text(ID.DocType, 'webm'),
      uint(ID.DocTypeVersion, 4),
      uint(ID.DocTypeReadVersion, 2),
    ]);
    // The size is patched at the end: 8 bytes, marked unknown until then.
    const segment = Buffer.from([...idBytes(ID.Segment), 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const segmentSizeAt = ebml.length + 4;
    const segmentDataAt = ebml.length + segment.length;
    const infoBody = Buffer.concat([
      uint(ID.TimecodeScale, 1_000_000),
      element(ID.Duration, float64Bytes(0)),
      text(ID.MuxingApp, APP),
      text(ID.WritingApp, APP),
    ]);
    const info = element(ID.Info, infoBody);
    const infoAt = segmentDataAt + SEEK_HEAD_SPACE;
    // The Duration's value: after Info's id (4) and size, TimecodeScale's element, Duration's id and size.
    const durationAt =
      infoAt + (info.length - infoBody.length) + uint(ID.TimecodeScale, 1_000_000).length + 3;
    const tracksElement = master(ID.Tracks, tracks.map(trackEntry));
    const head = Buffer.concat([ebml, segment, voidOf(SEEK_HEAD_SPACE), info, tracksElement]);
    const file = await fs.promises.open(path, 'w');
    try {
      await file.write(head, 0, head.length, 0);
    } catch (error) {
      await file.close();
      throw error;
    }
    return new WebmWriter(
      file,
      tracks,
      {
        segmentSizeAt,
        segmentDataAt,
        durationAt,
        info: infoAt - segmentDataAt,
        tracks: infoAt + info.length - segmentDataAt,
      },
      head.length,
    );
  }

  /**
   * Adds a frame (its bytes are kept, not copied, until its cluster is written out). A video key
   * frame starts a new cluster. Returns nothing; throws nothing (writing happens in `drain`).
   */
  add(track: number, timestampMs: number, key: boolean, data: Uint8Array): void {
    const at = Math.round(timestampMs);
    const full =
      this.cluster.length > 0 &&
      ((key && track === this.videoTrack) ||
        Math.max(at, this.clusterMax) - Math.min(at, this.clusterMin) >= MAX_CLUSTER_MS ||
        this.clusterBytes >= MAX_CLUSTER_BYTES);
    if (full) this.closeCluster();
    if (this.cluster.length === 0) {
      this.clusterMin = at;
      this.clusterMax = at;
    }
    this.clusterMin = Math.min(this.clusterMin, at);
    this.clusterMax = Math.max(this.clusterMax, at);
    this.cluster.push({ track, timestampMs: at, key, data });
    this.clusterBytes += data.length;
  }

  /** Writes out the clusters closed so far. Returns once written; throws what the file system throws. */
  async drain(): Promise<void> {
    if (this.queued.length === 0) return;
    const bytes = this.queued.length === 1 ? (this.queued[0] as Buffer) : Buffer.concat(this.queued);
    this.queued = [];
    await this.file.write(bytes, 0, bytes.length, this.position - bytes.length);
  }

  /**
   * Writes the last cluster, the Cues, the SeekHead, the Duration (ms) and the Segment's size, and
   * closes the file. Returns the file's size; throws what the file system throws.
   */
  async finish(durationMs: number): Promise<number> {
    this.closeCluster();
    await this.drain();
    const cuesPosition = this.position - this.segmentDataAt;
    const cues = master(
      ID.Cues,
      this.cues.map((cue) =>
        master(ID.CuePoint, [
          uint(ID.CueTime, cue.timeMs),
          master(ID.CueTrackPositions, [
            uint(ID.CueTrack, cue.track),
            uint(ID.CueClusterPosition, cue.clusterPosition),
          ]),
        ]),
      ),
    );
    const writes: [Buffer, number][] = [];
    if (this.cues.length > 0) {
      writes.push([cues, this.position]);
      this.position += cues.length;
    }
    const seek = (id: number, position: number): Buffer =>
      master(ID.Seek, [element(ID.SeekID, idBytes(id)), element(ID.SeekPosition, uintBytes(position, 8))]);
    const seeks = [seek(ID.Info, this.infoPosition), seek(ID.Tracks, this.tracksPosition)];
    if (this.cues.length > 0) seeks.push(seek(ID.Cues, cuesPosition));
    const seekHead = master(ID.SeekHead, seeks);
    writes.push([Buffer.concat([seekHead, voidOf(SEEK_HEAD_SPACE - seekHead.length)]), this.segmentDataAt]);
    writes.push([Buffer.from(float64Bytes(durationMs)), this.durationAt]);
    writes.push([Buffer.from(sizeBytes(this.position - this.segmentDataAt, 8)), this.segmentSizeAt]);
    try {
      for (const [bytes, at] of writes) await this.file.write(bytes, 0, bytes.length, at);
      await this.file.sync();
    } finally {
      await this.file.close();
    }
    return this.position;
  }

  /** Closes the file without finishing it (the caller removes it). Throws nothing. */
  async abort(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }

  /** Turns the cluster being built into bytes queued for `drain`, noting a seek point. */
  private closeCluster(): void {
    const frames = this.cluster;
    if (frames.length === 0) return;
    this.cluster = [];
    this.clusterBytes = 0;
    const base = this.clusterMin;
    const first = frames[0] as Pending;
    // Without video, every cluster is a seek point (its audio frames all decode on their own).
    if (first.key && (this.videoTrack === undefined || first.track === this.videoTrack)) {
      this.cues.push({
        timeMs: first.timestampMs,
        track: first.track,
        clusterPosition: this.position - this.segmentDataAt,
      });
    }
    // Blocks in time order (tracks are interleaved a frame apart as they come); stable for equal times.
    const ordered = frames.map((frame, index) => ({ frame, index }));
    ordered.sort((a, b) => a.frame.timestampMs - b.frame.timestampMs || a.index - b.index);
    const pieces: Buffer[] = [];
    let size = 0;
    const timecode = uint(ID.Timecode, base);
    pieces.push(timecode);
    size += timecode.length;
    for (const { frame } of ordered) {
      const bodyLength = 4 + frame.data.length;
      const head = Buffer.from([
        ...idBytes(ID.SimpleBlock),
        ...sizeBytes(bodyLength),
        ...sizeBytes(frame.track),
        0,
        0,
        frame.key ? 0x80 : 0,
      ]);
      head.writeInt16BE(frame.timestampMs - base, head.length - 3);
      pieces.push(head, Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength));
      size += head.length + frame.data.length;
    }
    const clusterHead = Buffer.from([...idBytes(ID.Cluster), ...sizeBytes(size)]);
    this.queued.push(clusterHead, ...pieces);
    this.position += clusterHead.length + size;
  }
}
