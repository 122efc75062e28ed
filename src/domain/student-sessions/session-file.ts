import { optionalEnum, type Params } from '../input.ts';

/**
 * The kinds of file a student session holds in `session_files`, each numbered by its own `sequence`
 * (0, 1, 2, ... without gaps). The candidate room writes them; the V3 files listing and the exam's
 * documents zip read them.
 */

/** A file the student handed in (the room's `POST uploads`; the documents zip collects exactly these). */
export const UPLOAD_KIND = 'upload';
/** One chunk of the room's webcam recording (camera and microphone). */
export const RECORDING_KIND = 'recording';
/** One chunk of the room's screen recording. */
export const SCREEN_RECORDING_KIND = 'screen_recording';
/** One chunk of the phone's recording (the second camera of a `mobile_cam` exam, docs/room.md). */
export const MOBILE_RECORDING_KIND = 'mobile_recording';
/** Every kind, in the order listings show them. */
export const SESSION_FILE_KINDS = [
  UPLOAD_KIND,
  RECORDING_KIND,
  SCREEN_RECORDING_KIND,
  MOBILE_RECORDING_KIND,
] as const;
export type SessionFileKind = (typeof SESSION_FILE_KINDS)[number];

/** A file the candidate room stored for a session, as its listing shows it. */
export interface SessionFile {
  readonly kind: SessionFileKind;
  readonly sequence: number;
  readonly fileId: number;
  readonly fileName: string;
  readonly contentType: string;
  readonly fileSize: number;
  readonly createdAt: number;
}

/** A session file with an expiring address that downloads it (`urlExpiresAt`, epoch ms). */
export interface LinkedSessionFile extends SessionFile {
  readonly url: string;
  readonly urlExpiresAt: number;
}

/**
 * The `kind` a listing is limited to. Returns it, or undefined when absent (every kind). Throws
 * Invalid (`kind`, `is not included in the list`) for anything but one of SESSION_FILE_KINDS.
 */
export function readSessionFileKind(params: Params): SessionFileKind | undefined {
  return optionalEnum(params, 'kind', SESSION_FILE_KINDS);
}
