/**
 * The review screen's words for its recordings, incident spans and file sizes (docs/review.md,
 * "The review screen"), kept out of the components so each reads them the same way.
 */
import type { paths } from '../../../shared/api-schema';
import { clockTime } from './review-time';

/** One recording of a session as GET /api/v3/student_sessions/:id/recordings lists it. */
export type Recording =
  paths['/api/v3/student_sessions/{id}/recordings']['get']['responses'][200]['content']['application/json']['recordings'][number];

/** A recording ready to play: where it is and how long it lasts (s). */
export interface ReadyRecording {
  readonly source: string;
  readonly url: string;
  readonly duration: number;
}

/** Returns the completed recordings that have an address, in the order listed. Throws nothing. */
export function readyRecordings(recordings: readonly Recording[]): ReadyRecording[] {
  return recordings.flatMap((recording) =>
    recording.status === 'completed' && recording.url !== undefined
      ? [{ source: recording.source, url: recording.url, duration: recording.duration_seconds ?? 0 }]
      : [],
  );
}

/** Each recording source in a reviewer's words. */
export const SOURCE_WORDS: Readonly<Record<string, string>> = {
  webcam: 'Webcam',
  screen: 'Screen',
  mobile: 'Phone',
};

/** Each status of a recording not ready to play, in a reviewer's words. */
export const RECORDING_STATUS_WORDS: Readonly<Record<string, string>> = {
  queued: 'waiting to be prepared (queued)',
  processing: 'being prepared (processing)',
  failed: 'could not be prepared (failed)',
};

/**
 * Returns "Recording of 00:41:07, 2 gaps" for a finished recording, or its status for one not ready
 * ("Recording being prepared (processing)"). Throws nothing.
 */
export function recordingWords(recording: Recording): string {
  if (recording.status !== 'completed')
    return `Recording ${RECORDING_STATUS_WORDS[recording.status] ?? recording.status}`;
  const gaps = recording.gaps.length;
  const gapWords = gaps === 0 ? '' : gaps === 1 ? ', one gap' : `, ${gaps} gaps`;
  return `Recording of ${clockTime(recording.duration_seconds ?? 0)}${gapWords}`;
}

/**
 * Returns a flag's span on the clock: "00:10–00:18", "from 00:10" (the episode lasted to the end,
 * `end` null) or "00:10" (one moment). Throws nothing.
 */
export function spanWords(at: number, end: number | null): string {
  if (end === null) return `from ${clockTime(at)}`;
  return end > at ? `${clockTime(at)}–${clockTime(end)}` : clockTime(at);
}

/** Returns a file size as "512 B", "14 kB" or "2.3 MB". Throws nothing. */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
