/**
 * The review screen's words for its recordings, incident spans and file sizes (docs/review.md,
 * "The review screen"), kept out of the components so each reads them the same way.
 */
import type { paths } from '../../../shared/api-schema';
import { t } from '../../../shared/i18n.svelte.ts';
import { formatLocale } from './format-locale.ts';
import { clockTime } from './review-time';
import { wordsRecord } from './words';

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
export const SOURCE_WORDS: Readonly<Record<string, string>> = wordsRecord({
  webcam: 'console.reviewWords.sourceWebcam',
  screen: 'console.reviewWords.sourceScreen',
  mobile: 'console.reviewWords.sourceMobile',
});

/** Each status of a recording not ready to play, in a reviewer's words. */
export const RECORDING_STATUS_WORDS: Readonly<Record<string, string>> = wordsRecord({
  queued: 'console.reviewWords.statusQueued',
  processing: 'console.reviewWords.statusProcessing',
  failed: 'console.reviewWords.statusFailed',
});

/**
 * Returns "Recording of 00:41:07, 2 gaps" for a finished recording, or its status for one not ready
 * ("Recording being prepared (processing)"). Throws nothing.
 */
export function recordingWords(recording: Recording): string {
  if (recording.status !== 'completed')
    return t('console.reviewWords.recordingNotReady', {
      status: RECORDING_STATUS_WORDS[recording.status] ?? recording.status,
    });
  return t('console.reviewWords.recordingOf', {
    duration: clockTime(recording.duration_seconds ?? 0),
    gaps: recording.gaps.length,
  });
}

/**
 * Returns a flag's span on the clock: "00:10–00:18", "from 00:10" (the episode lasted to the end,
 * `end` null) or "00:10" (one moment). Throws nothing.
 */
export function spanWords(at: number, end: number | null): string {
  if (end === null) return t('console.reviewWords.spanFrom', { time: clockTime(at) });
  return end > at ? `${clockTime(at)}–${clockTime(end)}` : clockTime(at);
}

/** Returns a file size as "512 B", "14 kB" or "2.3 MB". Throws nothing. */
export function fileSize(bytes: number): string {
  const number = (value: number, digits: number) =>
    new Intl.NumberFormat(formatLocale(), {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(value);
  if (bytes < 1024) return t('console.reviewWords.sizeBytes', { size: number(bytes, 0) });
  if (bytes < 1024 * 1024)
    return t('console.reviewWords.sizeKilobytes', { size: number(Math.round(bytes / 1024), 0) });
  return t('console.reviewWords.sizeMegabytes', { size: number(bytes / 1024 / 1024, 1) });
}
