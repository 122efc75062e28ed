// Placeholder listed in handlers.ts; a step 4 capability fills it in.
import type { JobHandlerDeps } from './handlers.ts';
import type { JobHandler } from './job.ts';

export function createMailDeliveryJob(_deps: JobHandlerDeps): JobHandler {
  return {
    kind: 'mail.deliver',
    run: () => Promise.reject(new Error('mail.deliver jobs are not built yet')),
  };
}
