/** The phone's camera: turning it on, wording a refusal, remembering the choice for a reopened page. */
import type { Phrase } from '../../shared/phrase.ts';

export type Facing = 'user' | 'environment';

/** Turns on the camera facing `which`, video only (the phone never records sound). Rejects as getUserMedia. */
export function openCamera(which: Facing): Promise<MediaStream> {
  return navigator.mediaDevices.getUserMedia({
    audio: false,
    video: {
      facingMode: { ideal: which },
      width: { ideal: 1280 },
      height: { ideal: 720 },
      frameRate: { ideal: 15, max: 30 },
    },
  });
}

/** What to do when the browser refuses the camera, by the kind of refusal. Returns the sentence. */
export function cameraAdvice(error: unknown): Phrase {
  const name = error instanceof DOMException ? error.name : '';
  if (name === 'NotAllowedError' || name === 'SecurityError') return { key: 'phone.camera.notAllowed' };
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return { key: 'phone.camera.notFound' };
  if (name === 'NotReadableError' || name === 'AbortError') return { key: 'phone.camera.busy' };
  return { key: 'phone.camera.failed' };
}

/** The camera this phone chose for this session, kept so a reopened page turns the same one on. */
export function facingMemory(token: string): { recall(): Facing | undefined; keep(which: Facing): void } {
  const key = `invigil-phone-camera:${token}`;
  return {
    recall() {
      try {
        const saved = localStorage.getItem(key);
        return saved === 'user' || saved === 'environment' ? saved : undefined;
      } catch {
        return undefined;
      }
    },
    keep(which) {
      try {
        localStorage.setItem(key, which);
      } catch {
        // Private browsing may refuse storage; the choice is only a convenience for a reopened page.
      }
    },
  };
}
