import {
  EncodedAudioPacketSource,
  EncodedPacket,
  EncodedVideoPacketSource,
  FilePathTarget,
  Output,
  WebMOutputFormat,
} from 'mediabunny';
import type { Gap } from './recording.ts';
import { type WebmFrame, type WebmHeader, WebmReader, type WebmTrack } from './webm-reader.ts';

/**
 * Assembles one stream's chunks (a webcam or a screen recording) into one seekable WebM file: the
 * frames are read from the chunks as they come (WebmReader), placed on the exam's clock, and
 * remuxed by mediabunny, which writes Cues (the seek index) and the duration at the end.
 *
 * Memory stays bounded whatever the length: one chunk at a time (plus the next one being read), and
 * the frames of the first PLACEMENT_CHUNKS chunks of a segment while its place is worked out.
 */

/** A stored chunk of the stream, in sequence order. */
export interface ChunkRef {
  readonly sequence: number;
  readonly storageKey: string;
  /** Bytes recorded when it was stored (fewer read back: it was cut short). */
  readonly size: number;
  /** When the server stored it (epoch ms). */
  readonly createdAt: number;
}

export interface AssembleInput {
  readonly chunks: readonly ChunkRef[];
  /**
   * The chunk's bytes, in the pieces they were read in (not joined: one copy fewer), or undefined
   * when its object is gone. Throws for anything worth a retry.
   */
  read(chunk: ChunkRef): Promise<readonly Uint8Array[] | undefined>;
  /** Video time 0 (epoch ms): the session's recording start. */
  readonly startedAt: number;
  /** When the recording ended (epoch ms), for a gap at the end; null when unknown. */
  readonly endedAt: number | null;
  /** Where the file is written (a temporary file the caller removes). */
  readonly outputPath: string;
  /** Gaps shorter than this (ms) are not reported. */
  readonly gapThresholdMs: number;
  readonly signal?: AbortSignal;
  /** Called every few chunks with the number read so far. */
  progress?(done: number): Promise<void>;
}

export interface AssembleResult {
  readonly durationSeconds: number;
  readonly gaps: readonly Gap[];
  readonly segments: number;
  /** Chunks missing or cut short. */
  readonly chunksDamaged: number;
  /** Places where the stream did not parse and the reader searched forward. */
  readonly resyncs: number;
}

/** The stream holds nothing that can be played (every chunk lost, or not WebM). */
export class NoPlayableRecording extends Error {
  override name = 'NoPlayableRecording';
}

/** A segment's place is judged from the arrival of its first chunks, this many (about 16 s). */
const PLACEMENT_CHUNKS = 4;
/** Without a better measure, a frame lasts this long (ms) at the end of a run. */
const DEFAULT_FRAME_MS = { video: 33, audio: 20 } as const;
/** A frame never lasts longer than this (ms): a longer distance to the next one is a gap. */
const MAX_FRAME_MS = 1000;
const PROGRESS_EVERY = 25;
/** How much of the output mediabunny gathers before a write. */
const OUTPUT_CHUNK_BYTES = 1024 * 1024;

/** The codec names mediabunny knows and the WebCodecs codec strings, by Matroska codec id. */
function codecOf(track: WebmTrack): { codec: string; string: string } | undefined {
  switch (track.codecId) {
    case 'V_VP8':
      return { codec: 'vp8', string: 'vp8' };
    case 'V_VP9':
      return { codec: 'vp9', string: 'vp09.00.10.08' };
    case 'V_AV1':
      return { codec: 'av1', string: 'av01.0.08M.08' };
    case 'V_MPEG4/ISO/AVC': {
      const config = track.codecPrivate;
      if (config === undefined || config.length < 4) return undefined;
      const hex = [...config.subarray(1, 4)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
      return { codec: 'avc', string: `avc1.${hex}` };
    }
    case 'A_OPUS':
      return { codec: 'opus', string: 'opus' };
    case 'A_VORBIS':
      return { codec: 'vorbis', string: 'vorbis' };
    default:
      return undefined;
  }
}

/** The first 4 bytes of a chunk read in pieces. */
function head(pieces: readonly Uint8Array[]): Uint8Array {
  const [first] = pieces;
  if (first !== undefined && first.length >= 4) return first;
  const joined = new Uint8Array(4);
  let at = 0;
  for (const piece of pieces) {
    for (const byte of piece) {
      if (at === 4) return joined;
      joined[at] = byte;
      at += 1;
    }
  }
  return joined.subarray(0, at);
}

/** One output track: its mediabunny source and what it was declared with. */
type OutTrack = (
  | {
      readonly type: 'video';
      readonly source: EncodedVideoPacketSource;
      readonly config: VideoDecoderConfig;
    }
  | {
      readonly type: 'audio';
      readonly source: EncodedAudioPacketSource;
      readonly config: AudioDecoderConfig;
    }
) &
  OutTrackState;

interface OutTrackState {
  readonly codecId: string;
  started: boolean;
  closed: boolean;
  /** The last timestamp written (ms), to keep the track's time moving forward. */
  lastMs: number;
}

/** A frame waiting for the next one of its track (which gives its duration). */
interface Held {
  readonly frame: WebmFrame;
  readonly out: OutTrack;
}

interface SegmentState {
  readonly header: WebmHeader;
  /** Input track number → output track (absent: its frames are dropped). */
  readonly map: Map<number, OutTrack>;
  /** created_at − media time reached, per chunk seen while placing. */
  readonly estimates: number[];
  chunksSeen: number;
  /** Frames kept until the segment is placed. */
  buffered: WebmFrame[] | undefined;
  /** Output ms = media ms + offset, once placed. */
  offsetMs: number;
  /** The media time reached during the chunk being read. */
  reachedMs: number | undefined;
  readonly held: Map<number, Held>;
}

/**
 * Assembles the stream (see the file's comment) into `input.outputPath`. Returns its duration
 * (video time), gaps and damage counts. Throws NoPlayableRecording when no frame could be read, the
 * signal's reason when aborted, and what `read` or the file system throws.
 */
export async function assembleRecording(input: AssembleInput): Promise<AssembleResult> {
  let output: Output | undefined;
  const tracks: OutTrack[] = [];
  let segment: SegmentState | undefined;
  let segments = 0;
  let damaged = 0;
  let coveredUntil = 0;
  let anyFrame = false;
  const gaps: Gap[] = [];
  let writing: Promise<void> = Promise.resolve();

  function openOutput(header: WebmHeader): void {
    output = new Output({
      format: new WebMOutputFormat({ minimumClusterDuration: 2 }),
      // Written out a MiB at a time (mediabunny's default holds 16 MiB before it writes).
      target: new FilePathTarget(input.outputPath, { chunked: true, chunkSize: OUTPUT_CHUNK_BYTES }),
    });
    const video = header.tracks.find((track) => track.type === 'video' && codecOf(track) !== undefined);
    const audio = header.tracks.find((track) => track.type === 'audio' && codecOf(track) !== undefined);
    if (video !== undefined) {
      const codec = codecOf(video);
      if (codec === undefined) throw new NoPlayableRecording(`unsupported video codec ${video.codecId}`);
      const source = new EncodedVideoPacketSource(codec.codec as 'vp8');
      output.addVideoTrack(source);
      const config: VideoDecoderConfig = {
        codec: codec.string,
        codedWidth: video.width || 640,
        codedHeight: video.height || 480,
        ...(codec.codec === 'avc' && video.codecPrivate !== undefined
          ? { description: video.codecPrivate }
          : {}),
      };
      tracks.push({
        type: 'video',
        codecId: video.codecId,
        source,
        config,
        started: false,
        closed: false,
        lastMs: -1,
      });
    }
    if (audio !== undefined) {
      const codec = codecOf(audio);
      if (codec === undefined) throw new NoPlayableRecording(`unsupported audio codec ${audio.codecId}`);
      const source = new EncodedAudioPacketSource(codec.codec as 'opus');
      output.addAudioTrack(source);
      const config: AudioDecoderConfig = {
        codec: codec.string,
        numberOfChannels: audio.channels || 1,
        sampleRate: audio.sampleRate || 48000,
        ...(audio.codecPrivate === undefined ? {} : { description: audio.codecPrivate }),
      };
      tracks.push({
        type: 'audio',
        codecId: audio.codecId,
        source,
        config,
        started: false,
        closed: false,
        lastMs: -1,
      });
    }
    if (tracks.length === 0) throw new NoPlayableRecording('no video or audio track the remuxer knows');
    writing = output.start();
  }

  /** Writes a frame to its output track (queued behind earlier writes). */
  function write(out: OutTrack, frame: WebmFrame, atMs: number, durationMs: number): void {
    if (out.closed || atMs < out.lastMs) return;
    if (!out.started && !frame.key) return;
    const first = !out.started;
    out.started = true;
    out.lastMs = atMs;
    const packet = new EncodedPacket(frame.data, frame.key ? 'key' : 'delta', atMs / 1000, durationMs / 1000);
    if (atMs > coveredUntil + input.gapThresholdMs)
      gaps.push({ start: coveredUntil / 1000, end: atMs / 1000 });
    coveredUntil = Math.max(coveredUntil, atMs + durationMs);
    anyFrame = true;
    writing = writing.then(() =>
      out.type === 'video'
        ? out.source.add(packet, first ? { decoderConfig: out.config } : undefined)
        : out.source.add(packet, first ? { decoderConfig: out.config } : undefined),
    );
    // Marked handled here; the failure is thrown where the chain is awaited (after each chunk).
    writing.catch(() => undefined);
  }

  /** Passes a placed frame on: the one held for its track goes out, timed by this one. */
  function emit(state: SegmentState, frame: WebmFrame): void {
    const out = state.map.get(frame.track);
    if (out === undefined) return;
    const held = state.held.get(frame.track);
    state.held.set(frame.track, { frame, out });
    if (held === undefined) return;
    const distance = frame.timestampMs - held.frame.timestampMs;
    const duration = distance > 0 && distance <= MAX_FRAME_MS ? distance : DEFAULT_FRAME_MS[out.type];
    write(out, held.frame, held.frame.timestampMs + state.offsetMs, duration);
  }

  /** Fixes the segment's offset from its chunks' arrival, then lets its buffered frames out. */
  function place(state: SegmentState): void {
    const buffered = state.buffered;
    if (buffered === undefined) return;
    state.buffered = undefined;
    const firstMs = buffered.reduce(
      (least, frame) => Math.min(least, frame.timestampMs),
      Number.POSITIVE_INFINITY,
    );
    const wallStart = state.estimates.length === 0 ? input.startedAt : Math.min(...state.estimates);
    const earliest = Number.isFinite(firstMs) ? coveredUntil - firstMs : coveredUntil;
    state.offsetMs = Math.max(wallStart - input.startedAt, earliest, 0);
    for (const frame of buffered) emit(state, frame);
  }

  /** Ends a segment: placed if it was not yet, its held frames written with a default duration. */
  function close(state: SegmentState): void {
    place(state);
    for (const { frame, out } of state.held.values()) {
      write(out, frame, frame.timestampMs + state.offsetMs, DEFAULT_FRAME_MS[out.type]);
    }
    state.held.clear();
  }

  const reader = new WebmReader({
    segment(header) {
      if (segment !== undefined) close(segment);
      if (output === undefined) openOutput(header);
      segments += 1;
      const map = new Map<number, OutTrack>();
      for (const out of tracks) {
        const match = header.tracks.find((track) => track.type === out.type && track.codecId === out.codecId);
        if (match !== undefined) map.set(match.number, out);
        else if (!out.closed) {
          // A segment without this track: closed for good, or the remuxer would wait for it forever.
          out.closed = true;
          out.source.close();
        }
      }
      segment = {
        header,
        map,
        estimates: [],
        chunksSeen: 0,
        buffered: [],
        offsetMs: 0,
        reachedMs: undefined,
        held: new Map(),
      };
    },
    frame(frame) {
      const state = segment;
      if (state === undefined) return;
      state.reachedMs = Math.max(state.reachedMs ?? 0, frame.timestampMs);
      if (state.buffered !== undefined) state.buffered.push(frame);
      else emit(state, frame);
    },
  });

  try {
    let next = input.chunks[0] === undefined ? undefined : input.read(input.chunks[0]);
    for (const [index, chunk] of input.chunks.entries()) {
      input.signal?.throwIfAborted();
      const pieces = await next;
      // The next chunk is read while this one is parsed.
      const following = input.chunks[index + 1];
      next = following === undefined ? undefined : input.read(following);
      next?.catch(() => undefined);
      const length = pieces?.reduce((sum, piece) => sum + piece.length, 0) ?? 0;
      if (pieces === undefined || length === 0) {
        damaged += 1;
        reader.discontinuity();
        continue;
      }
      if (WebmReader.startsSegment(head(pieces))) reader.discontinuity();
      if (segment !== undefined) segment.reachedMs = undefined;
      for (const piece of pieces) reader.push(piece);
      const state = segment;
      if (state?.buffered !== undefined) {
        if (state.reachedMs !== undefined) state.estimates.push(chunk.createdAt - state.reachedMs);
        state.chunksSeen += 1;
        if (state.chunksSeen >= PLACEMENT_CHUNKS) place(state);
      }
      if (length < chunk.size) {
        damaged += 1;
        reader.discontinuity();
      }
      await writing;
      if ((index + 1) % PROGRESS_EVERY === 0) await input.progress?.(index + 1);
    }
    if (segment !== undefined) close(segment);
    await writing;
    if (output === undefined || !anyFrame) throw new NoPlayableRecording('no playable frame in any chunk');
    if (input.endedAt !== null) {
      const endMs = input.endedAt - input.startedAt;
      if (endMs > coveredUntil + input.gapThresholdMs)
        gaps.push({ start: coveredUntil / 1000, end: endMs / 1000 });
    }
    await output.finalize();
    return {
      durationSeconds: Math.round(coveredUntil) / 1000,
      gaps,
      segments,
      chunksDamaged: damaged,
      resyncs: reader.resyncs,
    };
  } catch (error) {
    if (output !== undefined && output.state !== 'finalized' && output.state !== 'canceled') {
      await output.cancel().catch(() => undefined);
    }
    throw error;
  }
}
