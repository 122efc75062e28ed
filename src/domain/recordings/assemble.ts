import type { Gap } from './recording.ts';
import {
  type AssembleInput,
  type AssembleResult,
  type ChunkRef,
  MAX_FRAME_MS,
  NoPlayableRecording,
  PLACEMENT_CHUNKS,
  PROGRESS_EVERY,
  readAhead,
  segmentOffsetMs,
} from './assemble-contract.ts';
import { type WebmFrame, type WebmHeader, WebmReader, type WebmTrack } from './webm-reader.ts';
import { WebmWriter } from './webm-writer.ts';
import { assembleMp4 } from './mp4-assemble.ts';
import { looksLikeMp4 } from './mp4-boxes.ts';

/**
 * Assembles one stream's chunks (the webcam's, the screen's or the phone's recording) into one
 * seekable WebM file: the frames are read from the chunks as they come (WebmReader), placed on the
 * exam's clock, and written by WebmWriter, which writes Cues (the seek index) and the duration at
 * the end.
 *
 * Memory stays bounded whatever the length: one chunk at a time (plus the next one being read), and
 * the frames of the first PLACEMENT_CHUNKS chunks of a segment while its place is worked out, and
 * the writer's cluster being built (a few seconds).
 */

export type { AssembleInput, AssembleResult, ChunkRef, RecordingContentType } from './assemble-contract.ts';
export { NoPlayableRecording } from './assemble-contract.ts';

/** Without a better measure, a frame lasts this long (ms) at the end of a run. */
const DEFAULT_FRAME_MS = { video: 33, audio: 20 } as const;
/** The codecs a browser plays from WebM (and MediaRecorder writes), by Matroska codec id. */
const KNOWN_CODECS = new Set(['V_VP8', 'V_VP9', 'V_AV1', 'V_MPEG4/ISO/AVC', 'A_OPUS', 'A_VORBIS']);

/** The first `count` bytes (4 unless told) of a chunk read in pieces. */
function head(pieces: readonly Uint8Array[], count = 4): Uint8Array {
  const [first] = pieces;
  if (first !== undefined && first.length >= count) return first;
  const joined = new Uint8Array(count);
  let at = 0;
  for (const piece of pieces) {
    for (const byte of piece) {
      if (at === count) return joined;
      joined[at] = byte;
      at += 1;
    }
  }
  return joined.subarray(0, at);
}

/** One output track: its number in the file and what it was declared with. */
interface OutTrack {
  readonly type: 'video' | 'audio';
  readonly number: number;
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
 * Assembles the stream into `input.outputPath`: a WebM file when its first chunk that can be read
 * is WebM (EBML), an MP4 file when it is ISO BMFF (ftyp, styp or moof: Safari's fragmented MP4,
 * mp4-assemble.ts). Returns its duration (video time), gaps, damage counts and content type.
 * Throws NoPlayableRecording when no frame could be read, the signal's reason when aborted, and
 * what `read` or the file system throw.
 */
export async function assembleRecording(input: AssembleInput): Promise<AssembleResult> {
  // The first chunk read to tell the format is handed on, not read twice.
  let peeked: { chunk: ChunkRef; pieces: readonly Uint8Array[] | undefined } | undefined;
  let mp4 = false;
  for (const chunk of input.chunks) {
    input.signal?.throwIfAborted();
    const pieces = await input.read(chunk);
    peeked = { chunk, pieces };
    if (pieces === undefined || pieces.every((piece) => piece.length === 0)) continue;
    mp4 = looksLikeMp4(head(pieces, 8));
    break;
  }
  const read = (chunk: ChunkRef): Promise<readonly Uint8Array[] | undefined> => {
    if (peeked !== undefined && chunk === peeked.chunk) {
      const { pieces } = peeked;
      peeked = undefined;
      return Promise.resolve(pieces);
    }
    return input.read(chunk);
  };
  return mp4 ? assembleMp4({ ...input, read }) : assembleWebm({ ...input, read });
}

/** Assembles a WebM stream (see the file's comment). Returns and throws as assembleRecording. */
async function assembleWebm(input: AssembleInput): Promise<AssembleResult> {
  let writer: WebmWriter | undefined;
  let opening: Promise<WebmWriter> | undefined;
  const tracks: OutTrack[] = [];
  let segment: SegmentState | undefined;
  let segments = 0;
  let damaged = 0;
  let coveredUntil = 0;
  let anyFrame = false;
  const gaps: Gap[] = [];
  /** Frames placed before the file was open (the first chunk's), in order. */
  let early: [OutTrack, WebmFrame, number][] = [];

  /**
   * Declares the output's tracks from the first header: its first known video and audio track.
   * A stream without sound (the screen's, the phone's) gets a video track only.
   */
  function openOutput(header: WebmHeader): void {
    const video = header.tracks.find((track) => track.type === 'video' && KNOWN_CODECS.has(track.codecId));
    const audio = header.tracks.find((track) => track.type === 'audio' && KNOWN_CODECS.has(track.codecId));
    const declared: WebmTrack[] = [];
    for (const track of [video, audio]) {
      if (track === undefined) continue;
      const number = declared.length + 1;
      declared.push({ ...track, number });
      tracks.push({
        type: track.type,
        number,
        codecId: track.codecId,
        started: false,
        closed: false,
        lastMs: -1,
      });
    }
    if (tracks.length === 0) throw new NoPlayableRecording('no video or audio track of a known codec');
    opening = WebmWriter.open(input.outputPath, declared);
    opening.catch(() => undefined);
  }

  /** Writes a frame to its output track (held until the file is open). */
  function write(out: OutTrack, frame: WebmFrame, atMs: number, durationMs: number): void {
    if (out.closed || atMs < out.lastMs) return;
    if (!out.started && !frame.key) return;
    out.started = true;
    out.lastMs = atMs;
    if (atMs > coveredUntil + input.gapThresholdMs)
      gaps.push({ start: coveredUntil / 1000, end: atMs / 1000 });
    coveredUntil = Math.max(coveredUntil, atMs + durationMs);
    anyFrame = true;
    if (writer === undefined) early.push([out, frame, atMs]);
    else writer.add(out.number, atMs, frame.key, frame.data);
  }

  /** Opens the file once declared, writes what waited for it, then what the clusters closed. */
  async function flush(): Promise<void> {
    if (writer === undefined && opening !== undefined) {
      writer = await opening;
      for (const [out, frame, atMs] of early) writer.add(out.number, atMs, frame.key, frame.data);
      early = [];
    }
    await writer?.drain();
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
    state.offsetMs = segmentOffsetMs(firstMs, state.estimates, input.startedAt, coveredUntil);
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
      if (opening === undefined) openOutput(header);
      segments += 1;
      const map = new Map<number, OutTrack>();
      for (const out of tracks) {
        const match = header.tracks.find((track) => track.type === out.type && track.codecId === out.codecId);
        if (match !== undefined) map.set(match.number, out);
        // A segment without this track: closed for good (its time would not be continuous).
        else out.closed = true;
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
    for await (const { chunk, index, pieces, length } of readAhead(input)) {
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
      await flush();
      if ((index + 1) % PROGRESS_EVERY === 0) await input.progress?.(index + 1);
    }
    if (segment !== undefined) close(segment);
    await flush();
    if (writer === undefined || !anyFrame) throw new NoPlayableRecording('no playable frame in any chunk');
    if (input.endedAt !== null) {
      const endMs = input.endedAt - input.startedAt;
      if (endMs > coveredUntil + input.gapThresholdMs)
        gaps.push({ start: coveredUntil / 1000, end: endMs / 1000 });
    }
    await writer.finish(coveredUntil);
    writer = undefined;
    return {
      durationSeconds: Math.round(coveredUntil) / 1000,
      gaps,
      segments,
      chunksDamaged: damaged,
      resyncs: reader.resyncs,
      contentType: 'video/webm',
    };
  } catch (error) {
    const open = writer ?? (await opening?.catch(() => undefined));
    await open?.abort();
    throw error;
  }
}
