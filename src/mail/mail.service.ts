// Placeholder wired into app.ts; the mail capability (step 4) fills it in.
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { JobQueue } from '../jobs/queue.ts';

export type MailService = Record<string, never>;

export function createMailService(_deps: {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  jobs: JobQueue;
}): MailService {
  return {};
}
