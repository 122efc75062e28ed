// Placeholder wired into app.ts; the documents capability (step 2) fills it in.
import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import type { FilesService } from '../files/files.service.ts';

export type DocumentsService = Record<string, never>;

export function createDocumentsService(_deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): DocumentsService {
  return {};
}
