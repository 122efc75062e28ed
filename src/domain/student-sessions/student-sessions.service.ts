// Placeholder wired into app.ts; the student-sessions capability (step 2) fills it in.
import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import type { FilesService } from '../files/files.service.ts';

export type StudentSessionsService = Record<string, never>;

export function createStudentSessionsService(_deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): StudentSessionsService {
  return {};
}
