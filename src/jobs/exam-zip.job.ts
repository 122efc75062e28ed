import { EXAM_ZIP_JOB, type ExportInclude, payloadIncludes } from '../domain/exports/exam-export.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/** The payload `examExports.generate` enqueues. */
interface ExamZipPayload {
  readonly examId: number;
  /** What the archive adds to the handed-in files (absent: nothing). */
  readonly include: readonly ExportInclude[];
}

/** Reads the payload (plain JSON from the jobs table). Returns it; throws a TypeError when malformed. */
function parseExamZipPayload(payload: unknown): ExamZipPayload {
  const examId =
    typeof payload === 'object' && payload !== null && 'examId' in payload ? payload.examId : undefined;
  const include = payloadIncludes(
    typeof payload === 'object' && payload !== null && 'include' in payload ? payload.include : undefined,
  );
  if (typeof examId !== 'number' || !Number.isInteger(examId) || examId < 1) {
    throw new TypeError(`an ${EXAM_ZIP_JOB} job needs {"examId": <exam id>}, got ${JSON.stringify(payload)}`);
  }
  if (include === undefined) {
    throw new TypeError(
      `an ${EXAM_ZIP_JOB} job's "include" lists names of recordings, photos, reports, got ${JSON.stringify(payload)}`,
    );
  }
  return { examId, include };
}

/**
 * The `exam_zip` handler: builds the archive of the export its job belongs to
 * (services.examExports.build, which finds the export by the job's id). Idempotent:
 * a retried or resumed attempt starts over and replaces any partial result. Returns the handler.
 */
export function createExamZipJob(deps: JobHandlerDeps): JobHandler {
  return {
    kind: EXAM_ZIP_JOB,
    async run(payload, ctx) {
      const { examId, include } = parseExamZipPayload(payload);
      await deps.services.examExports.build(examId, ctx, include);
    },
  };
}
