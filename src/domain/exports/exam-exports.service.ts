// Placeholder wired into app.ts; the zip-export capability (step 4) fills it in.
import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Clock } from '../clock.ts';
import type { FilesService } from '../files/files.service.ts';

export type ExamExportsService = Record<string, never>;

export function createExamExportsService(_deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
  jobs: JobQueue;
}): ExamExportsService {
  return {};
}
