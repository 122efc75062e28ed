import { Worker } from 'node:worker_threads';
import { ServiceUnavailable } from '../errors.ts';
import type { ProcessingRecordData } from '../processing-record/processing-record.ts';
import type { RenderAnswer, RenderDocument, RenderRequest } from './report-render-worker.ts';
import type { SessionReportData } from './session-report.ts';

/** How long one report may take in its thread before it is abandoned (docs/security.md, "H1"). */
export const REPORT_TIME_BUDGET_MS = 60_000;

/** How many reports may wait for the thread; one more is refused at once. */
export const REPORT_QUEUE_LIMIT = 32;

/** An idle thread is ended after this long, giving back the memory its fonts hold. */
const IDLE_MS = 30_000;

/** Renders session reports away from the event loop. */
export interface ReportRenderer {
  /**
   * Renders the report of `data` in the renderer's thread. Returns the PDF. Throws
   * ServiceUnavailable when REPORT_QUEUE_LIMIT reports already wait, or when this one ran past the
   * time budget (its thread is then ended, and the next report gets a new one); throws an Error
   * with the PDF library's message when that failed.
   */
  render(data: SessionReportData): Promise<Uint8Array>;
  /**
   * Renders an institute's record of processing (docs/data-protection.md) in the same thread, in
   * turn with the reports. Returns the PDF; throws what `render` throws.
   */
  renderProcessingRecord(data: ProcessingRecordData): Promise<Uint8Array>;
  /** Ends the thread (a later render starts a new one). */
  close(): Promise<void>;
}

interface Job {
  readonly job: number;
  readonly document: RenderDocument;
  readonly resolve: (bytes: Uint8Array) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Builds a renderer with one thread, which renders one report at a time (a report is CPU work:
 * more threads than cores would only slow every request down). Reports wait in turn; each has
 * `budgetMs` once it starts. An idle thread does not keep the process alive. Returns the renderer.
 */
export function createReportRenderer(
  options: { budgetMs?: number; queueLimit?: number } = {},
): ReportRenderer {
  const budgetMs = options.budgetMs ?? REPORT_TIME_BUDGET_MS;
  const queueLimit = options.queueLimit ?? REPORT_QUEUE_LIMIT;
  const waiting: Job[] = [];
  let worker: Worker | undefined;
  let current: { job: Job; timer: NodeJS.Timeout } | undefined;
  let idle: NodeJS.Timeout | undefined;
  let sequence = 0;

  function finish(): Job | undefined {
    if (current === undefined) return undefined;
    clearTimeout(current.timer);
    const { job } = current;
    current = undefined;
    return job;
  }

  function stopWorker(): void {
    const ending = worker;
    worker = undefined;
    if (ending === undefined) return;
    ending.removeAllListeners();
    void ending.terminate();
  }

  function startWorker(): Worker {
    const started = new Worker(new URL('./report-render-worker.ts', import.meta.url));
    started.on('message', (answer: RenderAnswer) => {
      if (current === undefined || current.job.job !== answer.job) return;
      const job = finish();
      if ('bytes' in answer) job?.resolve(answer.bytes);
      else job?.reject(new Error(`the PDF could not be rendered: ${answer.error}`));
      next();
    });
    // A thread that died (out of memory, a bug) fails its report; the next report starts another.
    const died = (error: Error) => {
      stopWorker();
      finish()?.reject(error);
      next();
    };
    started.on('error', died);
    started.on('exit', (code) => died(new Error(`the report thread ended with code ${code}`)));
    return started;
  }

  function next(): void {
    if (current !== undefined) return;
    const job = waiting.shift();
    if (job === undefined) {
      // Idle: the thread no longer keeps the process alive, and ends after a while.
      worker?.unref();
      clearTimeout(idle);
      idle = setTimeout(stopWorker, IDLE_MS);
      idle.unref();
      return;
    }
    clearTimeout(idle);
    worker ??= startWorker();
    worker.ref();
    const timer = setTimeout(() => {
      stopWorker();
      finish()?.reject(new ServiceUnavailable());
      next();
    }, budgetMs);
    timer.unref();
    current = { job, timer };
    const request: RenderRequest = { job: job.job, document: job.document };
    worker.postMessage(request);
  }

  function enqueue(document: RenderDocument): Promise<Uint8Array> {
    if (waiting.length >= queueLimit) return Promise.reject(new ServiceUnavailable());
    return new Promise<Uint8Array>((resolve, reject) => {
      sequence += 1;
      waiting.push({ job: sequence, document, resolve, reject });
      next();
    });
  }

  return {
    render(data) {
      return enqueue({ kind: 'session_report', data });
    },

    renderProcessingRecord(data) {
      return enqueue({ kind: 'processing_record', data });
    },

    async close() {
      clearTimeout(idle);
      for (const job of waiting.splice(0)) job.reject(new ServiceUnavailable());
      finish()?.reject(new ServiceUnavailable());
      const ending = worker;
      worker = undefined;
      if (ending === undefined) return;
      ending.removeAllListeners();
      await ending.terminate();
    },
  };
}

/** The renderer the service shares between the API and the zip job (one thread per process). */
export const sharedReportRenderer: ReportRenderer = createReportRenderer();
