import type { LinkedRecording } from '../../domain/recordings/recording.ts';
import { isoTime } from '../time.ts';

/**
 * The V3 entry of a session's recordings: `started_at` is video time 0, `gaps` are in seconds of
 * video time, and `url` / `expires_at` appear only once the recording is completed.
 */
export function presentRecordingV3(recording: LinkedRecording): Record<string, unknown> {
  return {
    source: recording.source,
    status: recording.status,
    started_at: recording.startedAt === null ? null : isoTime(recording.startedAt),
    duration_seconds: recording.durationSeconds,
    gaps: recording.gaps.map((gap) => ({ start: gap.start, end: gap.end })),
    ...(recording.url === null || recording.urlExpiresAt === null
      ? {}
      : { url: recording.url, expires_at: isoTime(recording.urlExpiresAt) }),
  };
}
