import type { Db } from '../../db/database.ts';
import { IMAGE_TYPES } from '../../storage/content-type.ts';
import { type ExpiringAddress, StorageMissing } from '../../storage/storage.ts';
import type { Upload } from '../../storage/upload.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound, NotFoundMessage, ParamMissing } from '../errors.ts';
import { instituteOfSession } from '../data-keys/data-keys.repository.ts';
import type { StoredFile } from '../files/file.ts';
import type { FilesService } from '../files/files.service.ts';
import { type PhotoKind, photoFileId, replacePhoto } from './photos.repository.ts';
import { findManageableSession, findVisibleSession } from './session-access.ts';
import type { StudentSession } from './student-session.ts';
import { findStudentSession } from './student-sessions.repository.ts';

export type { PhotoKind };

/** How long a face-photo address works (api.md, Limits: 5 minutes). */
export const FACE_PHOTO_URL_SECONDS = 300;

/** The 404 message of a face-photo address for a session that has no face photo. */
export const NO_FACE_PHOTO = "Couldn't find the face photo";

/** The 404 message of an ID-card address for a session that has no ID card photo. */
export const NO_ID_CARD = "Couldn't find the ID card";

/**
 * A compare-and-set that keeps losing means the row changes faster than we can read it; past this
 * many rounds something is wrong, and the request fails rather than spin.
 */
const MAX_ROUNDS = 10;

export interface PhotosService {
  /**
   * Removes the session's photo of `kind` (its stored file, then its fields nulled), for an actor
   * who manages the session's exam; a session without that photo is left as it is (harmless).
   * Returns the session as saved. Throws NotFound (Student Session, the id as sent) when it is
   * missing or out of scope, Forbidden when the actor sees it but may not manage its exam.
   */
  remove(actor: Actor, sessionId: string | number, kind: PhotoKind): Promise<StudentSession>;
  /**
   * An expiring address of the session's face photo, valid FACE_PHOTO_URL_SECONDS, for whoever may
   * read the session. Returns it with its expiry (epoch ms). Throws NotFound (Student Session) as
   * `remove` does, NotFoundMessage (NO_FACE_PHOTO) when the session has no face photo.
   */
  facePhotoAddress(actor: Actor, sessionId: string | number): Promise<ExpiringAddress>;
  /**
   * An expiring address of the session's ID card photo, like facePhotoAddress (an Invigil addition:
   * reviewers compare it with the candidate on video). Throws NotFound (Student Session) as `remove`
   * does, NotFoundMessage (NO_ID_CARD) when the session has no ID card photo.
   */
  idCardAddress(actor: Actor, sessionId: string | number): Promise<ExpiringAddress>;
  /**
   * Keeps `upload` as the session's photo of `kind`, replacing (and removing) any earlier one. For
   * the candidate room, which has authenticated the session itself, so no actor is asked. Returns
   * the session as saved. Throws ParamMissing (named `kind`) for no file or an empty one,
   * UnsupportedMediaType when the content is not one of IMAGE_TYPES (whatever the declared type),
   * NotFound (Student Session) when the session is gone; nothing is kept then.
   */
  attachPhoto(sessionId: number, kind: PhotoKind, upload: Upload | undefined): Promise<StudentSession>;
}

/**
 * Builds the photo use cases over the database, the clock and the files service. Returns the
 * service; building it throws nothing.
 */
export function createPhotosService(deps: { db: Db; clock: Clock; files: FilesService }): PhotosService {
  const { db, clock, files } = deps;

  /**
   * Sets the photo to `file` (null: none) whatever it was. Returns the id of the file it replaced
   * (null: none), now free to remove, or undefined when the session is gone.
   */
  async function swapPhoto(
    sessionId: number,
    kind: PhotoKind,
    file: StoredFile | null,
  ): Promise<{ replaced: number | null } | undefined> {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const current = await photoFileId(db, sessionId, kind);
      if (current === undefined) return undefined;
      if (current === null && file === null) return { replaced: null };
      if (await replacePhoto(db, sessionId, kind, current, file, clock.now())) return { replaced: current };
    }
    throw new Error(`the ${kind} of student session ${sessionId} kept changing; not changed`);
  }

  /** The session as saved now; NotFound (as sent) if it went meanwhile. */
  async function reread(sessionId: number, sent: string | number): Promise<StudentSession> {
    const session = await findStudentSession(db, sessionId);
    if (session === undefined) throw new NotFound('Student Session', sent);
    return session;
  }

  /** An expiring address of the session's photo of `kind` (facePhotoAddress, idCardAddress). */
  async function photoAddress(
    actor: Actor,
    sessionId: string | number,
    kind: PhotoKind,
  ): Promise<ExpiringAddress> {
    const { session } = await findVisibleSession(db, actor, sessionId);
    const fileId = kind === 'id_card' ? session.idCardFileId : session.facePhotoFileId;
    const missing = kind === 'id_card' ? NO_ID_CARD : NO_FACE_PHOTO;
    if (fileId === null) throw new NotFoundMessage(missing);
    try {
      return await files.address(fileId, FACE_PHOTO_URL_SECONDS);
    } catch (error) {
      // Removed between the read and the presigning: the session has no such photo any more.
      if (error instanceof StorageMissing) throw new NotFoundMessage(missing);
      throw error;
    }
  }

  return {
    async remove(actor, sessionId, kind) {
      const { session } = await findManageableSession(db, actor, sessionId);
      const fileId = kind === 'id_card' ? session.idCardFileId : session.facePhotoFileId;
      if (fileId === null) return session;
      const swapped = await swapPhoto(session.id, kind, null);
      // After the row lets go of it: a file is never removed while a row still points at it.
      if (swapped !== undefined) await files.remove([swapped.replaced]);
      return reread(session.id, sessionId);
    },

    facePhotoAddress(actor, sessionId) {
      return photoAddress(actor, sessionId, 'face_photo');
    },

    idCardAddress(actor, sessionId) {
      return photoAddress(actor, sessionId, 'id_card');
    },

    async attachPhoto(sessionId, kind, upload) {
      // An empty file part is what a browser form sends when no file was chosen.
      if (upload === undefined || upload.size === 0) throw new ParamMissing(kind);
      const instituteId = await instituteOfSession(db, sessionId);
      if (instituteId === undefined) throw new NotFound('Student Session', sessionId);
      const file = await files.keep(upload, IMAGE_TYPES, instituteId);
      let swapped: { replaced: number | null } | undefined;
      try {
        swapped = await swapPhoto(sessionId, kind, file);
      } catch (error) {
        await files.remove([file.id]);
        throw error;
      }
      if (swapped === undefined) {
        await files.remove([file.id]);
        throw new NotFound('Student Session', sessionId);
      }
      await files.remove([swapped.replaced]);
      return reread(sessionId, sessionId);
    },
  };
}
