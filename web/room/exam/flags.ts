/**
 * The automated flags' wiring in the exam room (docs/automated-flags.md): when the view says the
 * exam has them, the detectors (web/room/flags, loaded on demand so a room without flags never
 * downloads them) start with the recording, are handed the new streams when it resumes, and stop on
 * finish. Like the live part they may never cost the exam: a failure to load leaves the room as it is.
 */
import type { Flags } from '../flags/flags.ts';
import { api, room, token } from '../state/room.svelte.ts';
import { offsetNow } from './events.ts';

/** How long finishing waits for the last flag reports. */
export const FLAGS_STOP_LIMIT_MS = 3000;
/** The session storage key of the face photo the detectors compare with (this tab only). */
const FACE_PHOTO_KEY = `invigil-face-photo:${token}`;

let loading: Promise<Flags | null> | undefined;

/**
 * Keeps the face photo in this tab's session storage, so the detectors can compare with it after
 * a reload too. Never throws (a full storage only means no comparison).
 */
export function rememberFacePhoto(canvas: HTMLCanvasElement): void {
  try {
    sessionStorage.setItem(FACE_PHOTO_KEY, canvas.toDataURL('image/jpeg', 0.85));
  } catch {
    // No room in the storage: the exam goes on without a comparison.
  }
}

function facePhoto(): string | null {
  try {
    return sessionStorage.getItem(FACE_PHOTO_KEY);
  } catch {
    return null;
  }
}

/** Loads the detectors once and hands them the current streams. Returns them, or null. Never throws. */
export async function runFlags(): Promise<Flags | null> {
  const flagsView = room.view?.automated_flags;
  if (flagsView?.enabled !== true || room.view?.session.status !== 'exam_started') return null;
  const base = flagsView.models ?? '';
  const settings = flagsView.settings;
  loading ??= (async () => {
    try {
      const module = await import('../flags/flags.ts');
      return module.startFlags({
        api,
        base,
        settings,
        facePhoto: facePhoto(),
        offsetNow,
        running: () => room.view?.session.status === 'exam_started',
      });
    } catch (error) {
      console.info(`[automated flags] not loaded: ${String(error)}`);
      void room.call('POST', '/flags/rate', { hz: 0 }).catch(() => undefined);
      return null;
    }
  })();
  const flags = await loading;
  flags?.useStreams(room.cameraStream, room.screenStream);
  return flags;
}

/** Stops the detectors and sends their last reports, waiting at most `limitMs`. Never throws. */
export async function stopFlags(limitMs: number): Promise<void> {
  if (loading === undefined) return;
  const flags = await loading;
  await flags?.stop(limitMs);
}
