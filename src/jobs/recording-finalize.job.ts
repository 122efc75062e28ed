import { RECORDING_FINALIZE_JOB, type RecordingFinalizePayload } from '../domain/recordings/recording.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/** Reads the payload (plain JSON from the jobs table). Returns it; throws a TypeError when malformed. */
function parsePayload(payload: unknown): RecordingFinalizePayload {
  const id =
    typeof payload === 'object' && payload !== null && 'studentSessionId' in payload
      ? payload.studentSessionId
      : undefined;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) {
    throw new TypeError(
      `a ${RECORDING_FINALIZE_JOB} job needs {"studentSessionId": <session id>}, got ${JSON.stringify(payload)}`,
    );
  }
  return { studentSessionId: id };
}

/**
 * The `recording.finalize` handler: assembles a finished session's webcam and screen chunks into
 * one seekable file each, WebM or, for Safari's fragmented MP4, MP4 (services.recordings.finalize). Idempotent: a stream already
 * completed is skipped, gap incidents are replaced, not added. Returns the handler.
 */
export function createRecordingFinalizeJob(deps: JobHandlerDeps): JobHandler {
  return {
    kind: RECORDING_FINALIZE_JOB,
    async run(payload, ctx) {
      const { studentSessionId } = parsePayload(payload);
      await deps.services.recordings.finalize(studentSessionId, ctx);
    },
  };
}
