import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import type { FilesService } from '../files/files.service.ts';
import type { Params } from '../input.ts';
import { FACE_PHOTO_URL_SECONDS } from './photos.service.ts';
import { type LinkedSessionFile, readSessionFileKind } from './session-file.ts';
import { listSessionFiles } from './session-files.repository.ts';
import { findVisibleSession } from './session-access.ts';

/**
 * How long a session file's address works: as long as the face photo's (five minutes), the other
 * thing the candidate room captured that staff download through the API.
 */
export const SESSION_FILE_URL_SECONDS = FACE_PHOTO_URL_SECONDS;

export interface SessionFilesService {
  /**
   * The files the candidate room stored for the session (answer uploads, webcam and screen
   * recording chunks), for whoever may read the session, each with an expiring address valid
   * SESSION_FILE_URL_SECONDS. `params.kind` limits the list to one of SESSION_FILE_KINDS. Returns
   * them ordered by kind (SESSION_FILE_KINDS order), then sequence; a file removed while the list
   * is made is left out. Throws NotFound (Student Session, the id as sent) when the session is
   * missing or out of scope, then Invalid (`kind`) for an unknown kind.
   */
  list(actor: Actor, sessionId: string | number, params: Params): Promise<LinkedSessionFile[]>;
}

/**
 * Builds the session-files use cases over the database and the files service. Returns the service;
 * building it throws nothing.
 */
export function createSessionFilesService(deps: { db: Db; files: FilesService }): SessionFilesService {
  const { db, files } = deps;
  return {
    async list(actor, sessionId, params) {
      const { session } = await findVisibleSession(db, actor, sessionId);
      const kind = readSessionFileKind(params);
      return files.withAddresses(await listSessionFiles(db, session.id, kind), SESSION_FILE_URL_SECONDS);
    },
  };
}
