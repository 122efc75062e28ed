/**
 * The report renderer's thread (report-renderer.ts): renders each session report it is sent and
 * answers its bytes, moved rather than copied. One report at a time; the fonts are read once.
 */
import { parentPort } from 'node:worker_threads';
import { renderSessionReport, type SessionReportData } from './session-report.ts';

/** What the service sends: a job number and the report's data. */
export interface RenderRequest {
  readonly job: number;
  readonly data: SessionReportData;
}

/** What the thread answers: the PDF, or the message of what the PDF library threw. */
export type RenderAnswer =
  { readonly job: number; readonly bytes: Uint8Array } | { readonly job: number; readonly error: string };

parentPort?.on('message', (request: RenderRequest) => {
  renderSessionReport(request.data).then(
    (bytes) => {
      const answer: RenderAnswer = { job: request.job, bytes };
      parentPort?.postMessage(answer, [bytes.buffer as ArrayBuffer]);
    },
    (error: unknown) => {
      const answer: RenderAnswer = {
        job: request.job,
        error: error instanceof Error ? error.message : String(error),
      };
      parentPort?.postMessage(answer);
    },
  );
});
