// Placeholder wired into app.ts; the attachments capability (step 2) fills it in.
import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import type { FilesService } from '../files/files.service.ts';

export type AttachmentsService = Record<string, never>;

export function createAttachmentsService(_deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): AttachmentsService {
  return {};
}
