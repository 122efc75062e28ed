// Placeholder wired into app.ts; the photos capability (step 4) fills it in.
import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import type { FilesService } from '../files/files.service.ts';

export type PhotosService = Record<string, never>;

export function createPhotosService(_deps: { db: Db; clock: Clock; files: FilesService }): PhotosService {
  return {};
}
