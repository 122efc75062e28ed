/**
 * The recording profile (docs/recordings.md, "Recording profile"): per stream and quality level, the
 * container and codec, picture size, frame rate, key-frame interval and bitrates a MediaRecorder is
 * asked for. Pure functions: the page passes what its browser can record, the tests pass a list.
 *
 * The default level (`standard`) asks for 164 kbit/s for webcam and screen together (≈ 74 MB per
 * candidate-hour), so a 0.25 Mbps uplink keeps up; `low` 104 kbit/s, `high` 532 kbit/s. Encoders
 * overshoot on a noisy camera (the recording-cost benchmark measures what they write).
 */

/** The exam's setting `recording_quality`. */
export type Quality = 'low' | 'standard' | 'high';

/** The levels from the cheapest up. */
export const QUALITIES: readonly Quality[] = ['low', 'standard', 'high'];

/** The level an exam records at unless it says otherwise. */
export const DEFAULT_QUALITY: Quality = 'standard';

/**
 * What a recorder films: the room's camera (with or without sound, or its sound alone) or the
 * shared screen. (The phone records at its own fixed rate: web/phone/lib/recording.ts.)
 */
export type ProfileSource = 'webcam' | 'screen';

/** What the stream to record carries. */
export interface StreamKinds {
  readonly video: boolean;
  readonly audio: boolean;
}

/** What this browser's MediaRecorder writes (MediaRecorder.isTypeSupported in a page). */
export interface Capabilities {
  isTypeSupported(type: string): boolean;
}

/** How to shape a video track before recording it (applied to a clone of the track). */
export interface VideoShape {
  /** Largest width and height in pixels: a larger picture is scaled down, never up. */
  readonly maxWidth: number;
  readonly maxHeight: number;
  /** Frames per second at most. */
  readonly frameRate: number;
  /** MediaStreamTrack.contentHint: 'motion' for a face, 'text' for a screen of words. */
  readonly contentHint: 'motion' | 'text' | 'detail';
}

/** What a MediaRecorder is asked for. */
export interface RecordingProfile {
  readonly quality: Quality;
  /** The container and codecs; undefined: the browser chooses. */
  readonly mimeType: string | undefined;
  /** Video bitrate in bit/s (0 when the stream has no picture). */
  readonly videoBitsPerSecond: number;
  /** Audio bitrate in bit/s (0 when the stream has no sound). */
  readonly audioBitsPerSecond: number;
  /** Milliseconds between key frames (Chromium's videoKeyFrameIntervalDuration). */
  readonly keyFrameIntervalMs: number;
  /** How to shape the picture; undefined when the stream has no picture. */
  readonly video: VideoShape | undefined;
}

/** The numbers of one level of one source. */
interface Level {
  readonly videoKbit: number;
  readonly audioKbit: number;
  readonly keyFrameMs: number;
  readonly video: VideoShape;
}

const FACE: Pick<VideoShape, 'contentHint'> = { contentHint: 'motion' };
const TEXT: Pick<VideoShape, 'contentHint'> = { contentHint: 'text' };

/**
 * The levels. The webcam stays small and slow (a face fills enough of 320×240 for a reviewer and for
 * the on-device face detector, which itself works on a smaller picture; Chromium's MediaRecorder
 * records the camera's own size all the same, but drops the frames above the rate, which is what
 * bounds a noisy camera's bytes); the screen keeps its size up to
 * full HD, since scaling it down is what makes 14 px text unreadable, and saves instead on frames:
 * a screen changes seldom, and between changes a frame costs almost nothing.
 */
const LEVELS: Record<ProfileSource, Record<Quality, Level>> = {
  webcam: {
    low: {
      videoKbit: 48,
      audioKbit: 16,
      keyFrameMs: 4000,
      video: { maxWidth: 320, maxHeight: 240, frameRate: 6, ...FACE },
    },
    standard: {
      videoKbit: 80,
      audioKbit: 24,
      keyFrameMs: 4000,
      video: { maxWidth: 320, maxHeight: 240, frameRate: 10, ...FACE },
    },
    high: {
      videoKbit: 250,
      audioKbit: 32,
      keyFrameMs: 2000,
      video: { maxWidth: 640, maxHeight: 480, frameRate: 24, ...FACE },
    },
  },
  screen: {
    low: {
      videoKbit: 40,
      audioKbit: 0,
      keyFrameMs: 20000,
      video: { maxWidth: 1920, maxHeight: 1080, frameRate: 1, ...TEXT },
    },
    standard: {
      videoKbit: 60,
      audioKbit: 0,
      keyFrameMs: 10000,
      video: { maxWidth: 1920, maxHeight: 1080, frameRate: 2, ...TEXT },
    },
    high: {
      videoKbit: 250,
      audioKbit: 0,
      keyFrameMs: 4000,
      video: { maxWidth: 2560, maxHeight: 1600, frameRate: 5, ...TEXT },
    },
  },
};

/** H.264 baseline + AAC, as Safari writes MP4; the plain names are the fall-backs. */
const MP4_WITH_SOUND = ['video/mp4;codecs=avc1.42E01E,mp4a.40.2', 'video/mp4;codecs=avc1,mp4a', 'video/mp4'];
const MP4_VIDEO = ['video/mp4;codecs=avc1.42E01E', 'video/mp4;codecs=avc1', 'video/mp4'];

/**
 * The container and codecs to ask for, by preference: VP9 where it is written (the same picture for
 * fewer bits than VP8), VP8 otherwise, MP4 (H.264) where WebM is not written (Safari).
 */
export function mimeTypesFor(kinds: StreamKinds): readonly string[] {
  if (kinds.video && kinds.audio) {
    return ['video/webm;codecs=vp9,opus', 'video/webm;codecs=vp8,opus', 'video/webm', ...MP4_WITH_SOUND];
  }
  if (kinds.video) return ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm', ...MP4_VIDEO];
  return ['video/webm;codecs=opus', 'audio/webm;codecs=opus', 'video/webm', 'audio/mp4', 'video/mp4'];
}

/** The first of `candidates` the browser writes; undefined when none is (the browser then chooses). */
export function firstSupported(
  candidates: readonly string[],
  capabilities: Capabilities,
): string | undefined {
  return candidates.find((candidate) => {
    try {
      return capabilities.isTypeSupported(candidate);
    } catch {
      return false;
    }
  });
}

/**
 * The profile of `source` at `quality` for a stream carrying `kinds`, in a browser with
 * `capabilities`. `sizeOf` is the level whose picture size to keep: a recorder stepped down from
 * `high` keeps the size it began with, so every segment of one recording has the same picture size
 * (the finalised file declares the first one's); only bitrates and frame rate fall. Returns the
 * recorder's settings; never throws.
 */
export function profileFor(
  source: ProfileSource,
  quality: Quality,
  capabilities: Capabilities,
  kinds: StreamKinds = { video: true, audio: source === 'webcam' },
  sizeOf: Quality = quality,
): RecordingProfile {
  const level = LEVELS[source][quality];
  const size = LEVELS[source][sizeOf].video;
  // Sound outside the webcam (a camera exempt from the picture records its sound alone) takes the
  // webcam's rate of the same level.
  const audioKbit = LEVELS.webcam[quality].audioKbit;
  return {
    quality,
    mimeType: firstSupported(mimeTypesFor(kinds), capabilities),
    videoBitsPerSecond: kinds.video ? level.videoKbit * 1000 : 0,
    audioBitsPerSecond: kinds.audio ? audioKbit * 1000 : 0,
    keyFrameIntervalMs: level.keyFrameMs,
    video: kinds.video ? { ...level.video, maxWidth: size.maxWidth, maxHeight: size.maxHeight } : undefined,
  };
}

/** Bits per second the profile asks for, picture and sound together. */
export function bitsPerSecond(profile: RecordingProfile): number {
  return profile.videoBitsPerSecond + profile.audioBitsPerSecond;
}

/** Megabytes (10⁶ bytes) an hour of `bits` per second costs. */
export function megabytesPerHour(bits: number): number {
  return (bits * 3600) / 8 / 1e6;
}

/** The level one below `quality`; `low` stays `low`. */
export function stepDown(quality: Quality): Quality {
  return quality === 'high' ? 'standard' : 'low';
}

/** True when `value` names a level. */
export function isQuality(value: unknown): value is Quality {
  return typeof value === 'string' && (QUALITIES as readonly string[]).includes(value);
}

/** MediaTrackConstraints as profile.ts writes them (no DOM types here: the unit tests run in Node). */
export interface ShapeConstraints {
  readonly width: { readonly max: number };
  readonly height: { readonly max: number };
  readonly frameRate: { readonly max: number };
}

/**
 * The track constraints that shape a video track to `shape`: sizes and frame rate as upper bounds, so
 * a smaller camera or screen is left as it is.
 */
export function constraintsFor(shape: VideoShape): ShapeConstraints {
  return {
    width: { max: shape.maxWidth },
    height: { max: shape.maxHeight },
    frameRate: { max: shape.frameRate },
  };
}

/** Uplink the level needs, in Mbit/s, for webcam and screen together with room for the answers. */
export function uplinkNeededMbit(quality: Quality): number {
  const webcam = LEVELS.webcam[quality];
  const screen = LEVELS.screen[quality];
  const kbit = webcam.videoKbit + webcam.audioKbit + screen.videoKbit;
  // A quarter more than the media itself: headers, retries, the answers and the room's polls.
  return Math.round(kbit * 1.25) / 1000;
}

/** What the adaptive step down looks at (docs/recordings.md, "Stepping down"). */
export interface UplinkSignals {
  /** The connection check's measurement in Mbit/s, or null when it was not measured. */
  readonly measuredMbit: number | null;
  /** Chunks waiting to be sent now, over every queue. */
  readonly waiting: number;
  /** Chunks waiting at each earlier sample, oldest first (one sample per chunk interval). */
  readonly history: readonly number[];
  /** How many recorders write chunks (each adds one chunk per interval). */
  readonly recorders: number;
}

/** How many chunk intervals of steady growth in the queue count as "cannot keep up". */
export const GROWING_INTERVALS = 3;

/**
 * The level to record at: `quality`, or one below it when the measured line is slower than the level
 * needs or the upload queue has grown at every one of the last GROWING_INTERVALS samples and holds
 * more than one interval's chunks. Never below `low`.
 */
export function adaptedQuality(quality: Quality, signals: UplinkSignals): Quality {
  if (quality === 'low') return 'low';
  if (
    signals.measuredMbit !== null &&
    signals.measuredMbit > 0 &&
    signals.measuredMbit < uplinkNeededMbit(quality)
  ) {
    return stepDown(quality);
  }
  return queueGrowing(signals) ? stepDown(quality) : quality;
}

/** True when the queue grew at each of the last GROWING_INTERVALS samples and now holds a backlog. */
export function queueGrowing(signals: Pick<UplinkSignals, 'waiting' | 'history' | 'recorders'>): boolean {
  const series = [...signals.history, signals.waiting];
  if (series.length < GROWING_INTERVALS + 1) return false;
  const recent = series.slice(-(GROWING_INTERVALS + 1));
  for (let index = 1; index < recent.length; index += 1) {
    if ((recent[index] ?? 0) <= (recent[index - 1] ?? 0)) return false;
  }
  return signals.waiting > Math.max(1, signals.recorders) * GROWING_INTERVALS;
}
