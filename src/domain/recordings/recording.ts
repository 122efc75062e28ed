/**
 * Finalised recordings (docs/recordings.md): once a session finishes, the `recording.finalize` job
 * assembles each stream's chunks (webcam, screen, and the phone of a `mobile_cam` exam) into one
 * seekable file whose time is the exam's time: WebM, or MP4 when the browser recorded MP4 (Safari).
 */
import type { RecordingSource } from '../room/room.ts';

export type { RecordingSource } from '../room/room.ts';

/** Every status a recording can have. */
export const RECORDING_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

/** A stretch of video time (seconds from the session's recording start) with nothing recorded. */
export interface Gap {
  readonly start: number;
  readonly end: number;
}

/** One stream of a session: its status and, once completed, its file. */
export interface Recording {
  readonly id: number;
  readonly studentSessionId: number;
  readonly source: RecordingSource;
  readonly status: RecordingStatus;
  /** Video time 0 (epoch ms), or null before the job has looked. */
  readonly startedAt: number | null;
  readonly durationSeconds: number | null;
  readonly gaps: readonly Gap[];
  readonly fileId: number | null;
  readonly size: number | null;
  readonly chunks: number;
  readonly chunksDamaged: number;
  readonly error: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A recording with an expiring address of its file (completed ones only). */
export interface LinkedRecording extends Recording {
  readonly url: string | null;
  readonly urlExpiresAt: number | null;
}

/** The job kind, and its payload. */
export const RECORDING_FINALIZE_JOB = 'recording.finalize';
export interface RecordingFinalizePayload {
  readonly studentSessionId: number;
}

/** Attempts the job gets (its last failure marks the session's transcoding `failed`). */
export const RECORDING_FINALIZE_ATTEMPTS = 5;

/** Gaps at least this long (ms) are reported and become incidents. */
export const GAP_THRESHOLD_MS = 5000;

/** The incident kind of a recording gap. */
export const RECORDING_GAP_INCIDENT = 'recording_gap';

/** How long a recording's address works (seconds): long enough to watch a two-hour exam. */
export const RECORDING_URL_SECONDS = 4 * 60 * 60;

/** Each stream as incidents and logs name it (the phone's is the second camera of `mobile_cam`). */
export const RECORDING_SOURCE_WORDS: Readonly<Record<RecordingSource, string>> = {
  webcam: 'Webcam',
  screen: 'Screen',
  mobile: 'Phone',
};

/**
 * The name a finalised recording is downloaded as: `session-<id>-<source>.webm`, or `.mp4` for an
 * MP4 recording (`contentType` video/mp4: Safari's).
 */
export function recordingFileName(
  sessionId: number,
  source: RecordingSource,
  contentType = 'video/webm',
): string {
  return `session-${sessionId}-${source}.${recordingExtension(contentType)}`;
}

/** The file extension of a finalised recording of this content type: `mp4` or `webm`. */
export function recordingExtension(contentType: string): 'mp4' | 'webm' {
  return contentType === 'video/mp4' ? 'mp4' : 'webm';
}

/** "01:02:03" for a number of seconds. */
export function clockTime(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const parts = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  return parts.map((part) => String(part).padStart(2, '0')).join(':');
}

/** The comment of a gap's incident: which stream, how long, from when. Starts with gapCommentPrefix. */
export function gapComment(source: RecordingSource, gap: Gap): string {
  const seconds = Math.round(gap.end - gap.start);
  return `${gapCommentPrefix(source)}${seconds} s without recording from ${clockTime(gap.start)} to ${clockTime(gap.end)}`;
}

/**
 * What every gap incident of `source` starts with ("Phone recording gap: " for the phone), so a
 * retried job replaces its own incidents. Returns it.
 */
export function gapCommentPrefix(source: RecordingSource): string {
  return `${RECORDING_SOURCE_WORDS[source]} recording gap: `;
}
