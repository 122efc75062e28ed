/**
 * The report renderer's thread (report-renderer.ts): renders each document it is sent (a session
 * report, an institute's record of processing) and answers its bytes, moved rather than copied. One
 * document at a time; the fonts are read once.
 */
import { parentPort } from 'node:worker_threads';
import { type ProcessingRecordData, renderProcessingRecord } from '../processing-record/processing-record.ts';
import { renderSessionReport, type SessionReportData } from './session-report.ts';

/** A document the thread renders: which one, and its data. */
export type RenderDocument =
  | { readonly kind: 'session_report'; readonly data: SessionReportData }
  | { readonly kind: 'processing_record'; readonly data: ProcessingRecordData };

/** What the service sends: a job number and the document. */
export interface RenderRequest {
  readonly job: number;
  readonly document: RenderDocument;
}

function renderDocument(document: RenderDocument): Promise<Uint8Array> {
  return document.kind === 'session_report'
    ? renderSessionReport(document.data)
    : renderProcessingRecord(document.data);
}

/** What the thread answers: the PDF, or the message of what the PDF library threw. */
export type RenderAnswer =
  { readonly job: number; readonly bytes: Uint8Array } | { readonly job: number; readonly error: string };

parentPort?.on('message', (request: RenderRequest) => {
  renderDocument(request.document).then(
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
