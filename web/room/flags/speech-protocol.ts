/**
 * The messages between the room's speech detector (speech.ts, on the page) and its worker
 * (speech.worker.ts, which runs the Silero model). Audio frames are 1536 samples at 16 kHz, cut and
 * resampled by vad-web's audio worklet, and travel as transferred Float32Arrays.
 */

/** Page to worker. */
export type ToSpeech = { kind: 'load'; base: string } | { kind: 'frame'; samples: Float32Array };

/** Worker to page. */
export type FromSpeech =
  | { kind: 'loaded' }
  | { kind: 'load-failed'; error: string }
  | { kind: 'speaking'; speaking: boolean }
  | { kind: 'log'; message: string };

/** Samples in one frame of the legacy Silero model (96 ms at 16 kHz), as vad-web uses it. */
export const FRAME_SAMPLES = 1536;
