// Placeholder listed in handlers.ts; a step 4 capability fills it in.
import type { JobHandlerDeps } from './handlers.ts';
import type { JobHandler } from './job.ts';

export function createExamZipJob(_deps: JobHandlerDeps): JobHandler {
  return {
    kind: 'exam_zip',
    run: () => Promise.reject(new Error('exam_zip jobs are not built yet')),
  };
}
