/**
 * The messages between the room's face detector (face.ts, on the page's main thread) and its worker
 * (detector.worker.ts, which runs Human). Frames travel as transferred ImageBitmaps, so the page
 * never copies pixels; answers carry only the few numbers the signal rules read.
 */

/** A head's turn in radians, as Human's FaceMesh estimates it. */
export interface Angles {
  yaw: number;
  pitch: number;
  roll: number;
}

/** One face Human found: its detection score, its turn, and its FaceRes descriptor when asked for. */
export interface HumanFace {
  score: number;
  embedding?: number[];
  rotation?: { angle: Angles } | null;
}

/** What one detection found. */
export interface DetectionResult {
  face: HumanFace[];
}

/** Page to worker. */
export type ToDetector =
  { kind: 'load'; base: string } | { kind: 'detect'; id: number; frame: ImageBitmap; describe: boolean };

/** Worker to page. */
export type FromDetector =
  | { kind: 'loaded'; backend: string }
  | { kind: 'load-failed'; error: string }
  | { kind: 'detected'; id: number; result: DetectionResult }
  | { kind: 'failed'; id: number; error: string }
  | { kind: 'log'; message: string };
