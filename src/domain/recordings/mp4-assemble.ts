import {
  BufferSource,
  EncodedAudioPacketSource,
  EncodedPacket,
  EncodedPacketSink,
  EncodedVideoPacketSource,
  FilePathTarget,
  Input,
  MP4,
  Mp4OutputFormat,
  Output,
  QTFF,
  type AudioCodec,
  type VideoCodec,
} from 'mediabunny';
import {
  type AssembleInput,
  type AssembleResult,
  MAX_FRAME_MS,
  NoPlayableRecording,
  PLACEMENT_CHUNKS,
  PROGRESS_EVERY,
  readAhead,
  segmentOffsetMs,
} from './assemble-contract.ts';
import { Mp4BoxReader } from './mp4-boxes.ts';
import type { Gap } from './recording.ts';

/**
 * Assembles one stream of fragmented-MP4 chunks (Safari's MediaRecorder: H.264 + AAC; the first
 * chunk after a recorder starts holds its init segment, ftyp + moov, then moof + mdat fragments)
 * into one seekable MP4 file, copying the packets without re-encoding. Like the WebM path
 * (assemble.ts): a new init segment starts a new segment, placed on the exam's clock by the arrival
 * of its first chunks; gaps are kept and reported; a chunk missing or cut short loses its fragment,
 * and reading resumes at the next fragment.
 *
 * Reading: Mp4BoxReader cuts the bytes into units; each fragment is read by mediabunny as a tiny
 * file of its own (the segment's init segment + the fragment), so only one fragment is parsed at a
 * time. Writing: mediabunny's Mp4OutputFormat with `fastStart: 'fragmented'` to a file: it writes
 * each fragment (about a second) as it is complete and, at the end, an mfra index (fragment random
 * access: the seek index) and keeps nothing of what it has written, so memory stays bounded
 * whatever the length. The non-fragmented layout (one moov with sample tables) would keep an
 * object per sample until the end (about 100 bytes each: ~90 MB for a four-hour exam) and is not
 * used. Memory: one chunk, the frames of the first PLACEMENT_CHUNKS chunks of a segment while its
 * place is worked out, and the muxer's fragment being built.
 */

/** Without a better measure, a frame lasts this long (ms) at the end of a run (AAC: 1 024 samples at 48 kHz). */
const DEFAULT_FRAME_MS = { video: 33, audio: 21 } as const;
/** Output fragments of about this long (seconds): the seek index's granularity. */
const FRAGMENT_SECONDS = 1;
/** The file target writes in pieces of this size (bytes). */
const WRITE_BYTES = 1024 * 1024;
const VIDEO_CODECS = new Set(['avc', 'hevc', 'vp9', 'av1']);
const AUDIO_CODECS = new Set(['aac', 'opus', 'mp3']);

/** What a recorder's init segment declares for one track, with its decoder configuration. */
type SegmentTrack = {
  readonly id: number;
  readonly codec: string;
  readonly description: Uint8Array | undefined;
} & (
  | { readonly type: 'video'; readonly config: VideoDecoderConfig }
  | { readonly type: 'audio'; readonly config: AudioDecoderConfig }
);

/** An output track, declared from the first segment's. */
type OutTrack = {
  readonly codec: string;
  readonly description: Uint8Array | undefined;
  started: boolean;
  closed: boolean;
  /** Frames placed before this (ms) are dropped: the previous segment reached it. */
  floorMs: number;
  /** The end of the last frame written (ms). */
  endMs: number;
} & (
  | { readonly type: 'video'; readonly source: EncodedVideoPacketSource; readonly config: VideoDecoderConfig }
  | { readonly type: 'audio'; readonly source: EncodedAudioPacketSource; readonly config: AudioDecoderConfig }
);

interface Frame {
  readonly trackId: number;
  readonly timestampMs: number;
  readonly durationMs: number;
  readonly key: boolean;
  readonly data: Uint8Array;
}

interface Segment {
  readonly init: Uint8Array;
  /** Input track id → output track, and the bytes put before its key frames (new parameter sets). */
  readonly map: Map<number, { out: OutTrack; prefix: Uint8Array | undefined }>;
  readonly estimates: number[];
  chunksSeen: number;
  buffered: Frame[] | undefined;
  offsetMs: number;
  reachedMs: number | undefined;
}

/** A decoder configuration's description (avcC, AudioSpecificConfig) as bytes, or undefined. */
function toBytes(source: unknown): Uint8Array | undefined {
  if (source instanceof ArrayBuffer || source instanceof SharedArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  return undefined;
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * The SPS and PPS of an avcC record as length-prefixed NAL units (the sample format), to put in
 * front of a key frame so a decoder set up with the first segment's parameters takes the new ones.
 * Returns undefined when the record does not parse.
 */
function avcParameterSets(avcC: Uint8Array): Uint8Array | undefined {
  if (avcC.length < 7) return undefined;
  const lengthSize = ((avcC[4] ?? 0) & 3) + 1;
  const units: Uint8Array[] = [];
  let at = 5;
  for (const countMask of [0x1f, 0xff]) {
    const count = (avcC[at] ?? 0) & countMask;
    at += 1;
    for (let index = 0; index < count; index += 1) {
      const length = ((avcC[at] ?? 0) << 8) | (avcC[at + 1] ?? 0);
      at += 2;
      if (at + length > avcC.length) return undefined;
      const unit = new Uint8Array(lengthSize + length);
      for (let byte = 0; byte < lengthSize; byte += 1) {
        unit[byte] = Math.floor(length / 2 ** (8 * (lengthSize - 1 - byte))) & 0xff;
      }
      unit.set(avcC.subarray(at, at + length), lengthSize);
      units.push(unit);
      at += length;
    }
  }
  const all = new Uint8Array(units.reduce((sum, unit) => sum + unit.length, 0));
  let offset = 0;
  for (const unit of units) {
    all.set(unit, offset);
    offset += unit.length;
  }
  return all;
}

function join(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const all = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

function openInput(bytes: Uint8Array<ArrayBuffer>): Input {
  return new Input({ source: new BufferSource(bytes), formats: [MP4, QTFF] });
}

/** The tracks an init segment declares (each with its decoder configuration), or [] when it does not parse. */
async function readInit(init: Uint8Array<ArrayBuffer>): Promise<SegmentTrack[]> {
  const input = openInput(init);
  try {
    const tracks: SegmentTrack[] = [];
    for (const track of await input.getTracks()) {
      const codec = await track.getCodec();
      if (codec === null) continue;
      if (track.isVideoTrack()) {
        const config = await track.getDecoderConfig();
        if (config === null) continue;
        tracks.push({ id: track.id, type: 'video', codec, config, description: toBytes(config.description) });
      } else if (track.isAudioTrack()) {
        const config = await track.getDecoderConfig();
        if (config === null) continue;
        tracks.push({ id: track.id, type: 'audio', codec, config, description: toBytes(config.description) });
      }
    }
    return tracks;
  } catch {
    return [];
  } finally {
    input.dispose();
  }
}

/** A fragment's packets (decode order, per track), or undefined when it does not parse. */
async function readFragment(
  init: Uint8Array,
  fragment: Uint8Array,
  ids: Set<number>,
): Promise<Frame[] | undefined> {
  const input = openInput(join([init, fragment]));
  try {
    const frames: Frame[] = [];
    for (const track of await input.getTracks()) {
      if (!ids.has(track.id)) continue;
      for await (const packet of new EncodedPacketSink(track).packets()) {
        frames.push({
          trackId: track.id,
          timestampMs: packet.timestamp * 1000,
          durationMs: packet.duration * 1000,
          key: packet.type === 'key',
          data: packet.data,
        });
      }
    }
    return frames;
  } catch {
    return undefined;
  } finally {
    input.dispose();
  }
}

/**
 * Assembles an fMP4 stream (see the file's comment) into `input.outputPath`. Returns its duration,
 * gaps and damage counts. Throws NoPlayableRecording when no frame could be read, the signal's
 * reason when aborted, and what `read`, mediabunny or the file system throw.
 */
export async function assembleMp4(input: AssembleInput): Promise<AssembleResult> {
  let output: Output | undefined;
  const outs: OutTrack[] = [];
  let segment: Segment | undefined;
  let segments = 0;
  let damaged = 0;
  let coveredUntil = 0;
  let anyFrame = false;
  const gaps: Gap[] = [];
  /** Units cut from the chunk being read, handled once it is pushed. */
  let units: { kind: 'init' | 'fragment'; bytes: Uint8Array }[] = [];
  const reader = new Mp4BoxReader({
    init: (bytes) => units.push({ kind: 'init', bytes }),
    fragment: (bytes) => units.push({ kind: 'fragment', bytes }),
  });

  /** Declares the output's tracks from the first init segment: its first known video and audio track. */
  async function openOutput(tracks: readonly SegmentTrack[]): Promise<void> {
    const video = tracks.find((track) => track.type === 'video' && VIDEO_CODECS.has(track.codec));
    const audio = tracks.find((track) => track.type === 'audio' && AUDIO_CODECS.has(track.codec));
    if (video === undefined && audio === undefined) {
      throw new NoPlayableRecording('no video or audio track of a known codec');
    }
    const created = new Output({
      format: new Mp4OutputFormat({ fastStart: 'fragmented', minimumFragmentDuration: FRAGMENT_SECONDS }),
      // Written out every MiB: the only buffer the target holds.
      target: new FilePathTarget(input.outputPath, { chunked: true, chunkSize: WRITE_BYTES }),
    });
    const state = { started: false, closed: false, floorMs: 0, endMs: 0 };
    if (video?.type === 'video') {
      const source = new EncodedVideoPacketSource(video.codec as VideoCodec);
      created.addVideoTrack(source);
      outs.push({
        ...state,
        type: 'video',
        source,
        codec: video.codec,
        config: video.config,
        description: video.description,
      });
    }
    if (audio?.type === 'audio') {
      const source = new EncodedAudioPacketSource(audio.codec as AudioCodec);
      created.addAudioTrack(source);
      outs.push({
        ...state,
        type: 'audio',
        source,
        codec: audio.codec,
        config: audio.config,
        description: audio.description,
      });
    }
    await created.start();
    output = created;
  }

  /** Starts a segment at a recorder's init segment. */
  async function startSegment(init: Uint8Array<ArrayBuffer>): Promise<void> {
    if (segment !== undefined) await close(segment);
    const tracks = await readInit(init);
    if (output === undefined) {
      if (tracks.length === 0) return; // an init that does not parse: its fragments are skipped
      await openOutput(tracks);
    }
    segments += 1;
    const map = new Map<number, { out: OutTrack; prefix: Uint8Array | undefined }>();
    for (const out of outs) {
      const match = tracks.find((track) => track.type === out.type && track.codec === out.codec);
      const same = match !== undefined && sameBytes(match.description, out.description);
      if (match !== undefined && (same || out.codec === 'avc') && sameAudio(out, match)) {
        const prefix =
          same || match.description === undefined ? undefined : avcParameterSets(match.description);
        map.set(match.id, { out, prefix });
      } else if (!out.closed) {
        // Not continued in this segment (another codec, no such track): closed for good, as for WebM.
        out.closed = true;
        out.source.close();
      }
    }
    segment = { init, map, estimates: [], chunksSeen: 0, buffered: [], offsetMs: 0, reachedMs: undefined };
  }

  function sameAudio(out: OutTrack, track: SegmentTrack): boolean {
    if (out.type !== 'audio' || track.type !== 'audio') return true;
    return (
      out.config.sampleRate === track.config.sampleRate &&
      out.config.numberOfChannels === track.config.numberOfChannels
    );
  }

  async function write(state: Segment, frame: Frame): Promise<void> {
    const mapped = state.map.get(frame.trackId);
    if (mapped === undefined) return;
    const { out, prefix } = mapped;
    const atMs = frame.timestampMs + state.offsetMs;
    if (out.closed || atMs < out.floorMs) return;
    if (!out.started && !frame.key) return;
    const durationMs =
      frame.durationMs > 0 && frame.durationMs <= MAX_FRAME_MS
        ? frame.durationMs
        : DEFAULT_FRAME_MS[out.type];
    if (atMs > coveredUntil + input.gapThresholdMs)
      gaps.push({ start: coveredUntil / 1000, end: atMs / 1000 });
    coveredUntil = Math.max(coveredUntil, atMs + durationMs);
    out.endMs = Math.max(out.endMs, atMs + durationMs);
    anyFrame = true;
    const data = frame.key && prefix !== undefined ? join([prefix, frame.data]) : frame.data;
    const packet = new EncodedPacket(data, frame.key ? 'key' : 'delta', atMs / 1000, durationMs / 1000);
    const first = !out.started;
    out.started = true;
    if (out.type === 'video') await out.source.add(packet, first ? { decoderConfig: out.config } : undefined);
    else await out.source.add(packet, first ? { decoderConfig: out.config } : undefined);
  }

  /** Fixes the segment's offset from its chunks' arrival, then writes its buffered frames. */
  async function place(state: Segment): Promise<void> {
    const buffered = state.buffered;
    if (buffered === undefined) return;
    state.buffered = undefined;
    const firstMs = buffered.reduce(
      (least, frame) => Math.min(least, frame.timestampMs),
      Number.POSITIVE_INFINITY,
    );
    state.offsetMs = segmentOffsetMs(firstMs, state.estimates, input.startedAt, coveredUntil);
    for (const { out } of state.map.values()) out.floorMs = out.endMs;
    for (const frame of buffered) await write(state, frame);
  }

  async function close(state: Segment): Promise<void> {
    await place(state);
  }

  async function handleUnits(): Promise<void> {
    const taken = units;
    units = [];
    for (const unit of taken) {
      if (unit.kind === 'init') {
        await startSegment(join([unit.bytes]));
        continue;
      }
      const state = segment;
      if (state === undefined || state.map.size === 0) continue;
      const frames = await readFragment(state.init, unit.bytes, new Set(state.map.keys()));
      if (frames === undefined) {
        reader.resyncs += 1;
        continue;
      }
      for (const frame of frames) {
        state.reachedMs = Math.max(state.reachedMs ?? 0, frame.timestampMs);
        if (state.buffered !== undefined) state.buffered.push(frame);
        else await write(state, frame);
      }
    }
  }

  try {
    for await (const { chunk, index, pieces, length } of readAhead(input)) {
      if (pieces === undefined || length === 0) {
        damaged += 1;
        reader.discontinuity();
        continue;
      }
      if (segment !== undefined) segment.reachedMs = undefined;
      for (const piece of pieces) reader.push(piece);
      if (length < chunk.size) {
        damaged += 1;
        reader.discontinuity();
      }
      await handleUnits();
      const state = segment;
      if (state?.buffered !== undefined) {
        if (state.reachedMs !== undefined) state.estimates.push(chunk.createdAt - state.reachedMs);
        state.chunksSeen += 1;
        if (state.chunksSeen >= PLACEMENT_CHUNKS) await place(state);
      }
      if ((index + 1) % PROGRESS_EVERY === 0) await input.progress?.(index + 1);
    }
    if (segment !== undefined) await close(segment);
    if (output === undefined || !anyFrame) throw new NoPlayableRecording('no playable frame in any chunk');
    if (input.endedAt !== null) {
      const endMs = input.endedAt - input.startedAt;
      if (endMs > coveredUntil + input.gapThresholdMs)
        gaps.push({ start: coveredUntil / 1000, end: endMs / 1000 });
    }
    for (const out of outs) if (!out.closed) out.source.close();
    await output.finalize();
    return {
      durationSeconds: Math.round(coveredUntil) / 1000,
      gaps,
      segments,
      chunksDamaged: damaged,
      resyncs: reader.resyncs,
      contentType: 'video/mp4',
    };
  } catch (error) {
    await output?.cancel().catch(() => undefined);
    throw error;
  }
}
