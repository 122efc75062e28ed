/**
 * `flags-accuracy`: how often the room's face detector (`@vladmandic/human` in headless Chromium,
 * the room's settings) gets the labelled pictures of test/flags/labelled-images.ts right (140 crops
 * of photos shipped in the package: 108 with one face, 18 with two, 14 with none), and what that
 * would mean as false flags per hour for an honest candidate.
 *
 * Per picture it counts the faces found. From the per-picture rates it estimates false flags per
 * hour of a candidate who sits still in front of the camera, at the room's detection rate and
 * thresholds, as if each detection were an independent draw (a flag needs `seconds × rate` misses
 * in a row): expected episodes = detections per hour × (1 − p) × pⁿ. Frames of one real camera are
 * not independent (a face the model cannot see stays unseen), so the same figures are also given
 * per picture: the share of candidates who would be flagged for the whole exam.
 *
 * Figures are reported, never asserted; the machine is shared.
 */
import { type Benchmark, type BenchmarkReport } from './benchmark.ts';
import { launchDrawingBrowser } from '../test/flags/fake-camera.ts';
import { detectPicture, FLAG_SETTINGS_DEFAULTS, openDetectorPage } from '../test/flags/detector-page.ts';
import { labelledPictures } from '../test/flags/labelled-images.ts';

interface Outcome {
  readonly name: string;
  readonly label: number;
  /** The signals the room's detector raised on this picture (no_face, multiple_faces, looking_away). */
  readonly signals: readonly string[];
  readonly ms: number;
}

function share(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** Expected runs of at least `length` misses in `frames` independent draws with miss chance `p`. */
export function expectedRuns(frames: number, p: number, length: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  return frames * (1 - p) * p ** length;
}

/** A rate per hour for people: two decimals, or the power of ten when it is below 0.01. */
function perHour(value: number): string {
  return value === 0 || value >= 0.01 ? value.toFixed(2) : value.toExponential(1);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export const flagsAccuracy: Benchmark = {
  name: 'flags-accuracy',
  title: 'room face detector on 140 labelled pictures: detection rate, false flags per hour',
  async run(): Promise<BenchmarkReport> {
    const settings = FLAG_SETTINGS_DEFAULTS;
    const pictures = await labelledPictures();
    const browser = await launchDrawingBrowser();
    const outcomes: Outcome[] = [];
    let backend: string;
    try {
      const context = await browser.newContext();
      const opened = await openDetectorPage(context, settings);
      backend = opened.backend;
      for (const picture of pictures) {
        const detection = await detectPicture(opened.page, picture.png);
        outcomes.push({
          name: picture.scene.name,
          label: picture.scene.faces,
          signals: Object.keys(detection.signals).sort(),
          ms: detection.ms,
        });
      }
    } finally {
      await browser.close();
    }

    const raised = (outcome: Outcome, type: string): boolean => outcome.signals.includes(type);
    const ones = outcomes.filter((outcome) => outcome.label === 1);
    const twos = outcomes.filter((outcome) => outcome.label === 2);
    const nones = outcomes.filter((outcome) => outcome.label === 0);
    const oneMissed = ones.filter((outcome) => raised(outcome, 'no_face'));
    const oneExtra = ones.filter((outcome) => raised(outcome, 'multiple_faces'));
    const oneTurned = ones.filter((outcome) => raised(outcome, 'looking_away'));
    const oneClean = ones.filter((outcome) => outcome.signals.length === 0);
    const twoFound = twos.filter((outcome) => raised(outcome, 'multiple_faces'));
    const noneFlagged = nones.filter((outcome) => raised(outcome, 'no_face'));

    const hz = settings.detection_hz;
    const frames = hz * 3600;
    const missRate = share(oneMissed.length, ones.length);
    const extraRate = share(oneExtra.length, ones.length);
    const turnedRate = share(oneTurned.length, ones.length);
    const falseFlagsPerHour = {
      no_face: expectedRuns(frames, missRate, Math.ceil(settings.no_face_seconds * hz)),
      multiple_faces: expectedRuns(frames, extraRate, Math.ceil(settings.multiple_faces_seconds * hz)),
      looking_away: expectedRuns(frames, turnedRate, Math.ceil(settings.looking_away_seconds * hz)),
    };
    const names = (list: readonly Outcome[]): string =>
      list.map((outcome) => outcome.name).join(', ') || 'none';
    const medianMs = median(outcomes.map((outcome) => outcome.ms));

    const lines = [
      `the room's FaceDetector (Human, backend ${backend}) with the default settings: ${hz} Hz, ` +
        `no face ${settings.no_face_seconds} s, two faces ${settings.multiple_faces_seconds} s, ` +
        `turned away ${settings.looking_away_seconds} s`,
      `one face (${ones.length}): no signal ${oneClean.length} (${percent(share(oneClean.length, ones.length))}); ` +
        `no_face ${oneMissed.length} (${percent(missRate)}), multiple_faces ${oneExtra.length} ` +
        `(${percent(extraRate)}), looking_away ${oneTurned.length} (${percent(turnedRate)})`,
      `two faces (${twos.length}): multiple_faces ${twoFound.length} (${percent(share(twoFound.length, twos.length))})`,
      `no face (${nones.length}): no_face ${noneFlagged.length} (${percent(share(noneFlagged.length, nones.length))})`,
      `false flags per hour, candidate who stays, independent frames: no_face ` +
        `${perHour(falseFlagsPerHour.no_face)}, multiple_faces ${perHour(falseFlagsPerHour.multiple_faces)}, ` +
        `looking_away ${perHour(falseFlagsPerHour.looking_away)}`,
      `share of candidates flagged all exam long if they sat like their picture: no_face ${percent(missRate)}, ` +
        `multiple_faces ${percent(extraRate)}, looking_away ${percent(turnedRate)}`,
      `faces missed: ${names(oneMissed)}`,
      `extra faces: ${names(oneExtra)}`,
      `counted as turned away: ${names(oneTurned)}`,
      `two faces not seen as two: ${names(twos.filter((outcome) => !raised(outcome, 'multiple_faces')))}`,
      `faces seen where there are none: ${names(nones.filter((outcome) => !raised(outcome, 'no_face')))}`,
      `time per detection (this machine, headless, no GPU): median ${medianMs.toFixed(0)} ms`,
    ];
    return {
      lines,
      figures: {
        backend,
        settings,
        pictures: { one: ones.length, two: twos.length, none: nones.length },
        oneFaceNoSignal: share(oneClean.length, ones.length),
        oneFaceMissed: missRate,
        oneFaceExtra: extraRate,
        oneFaceTurned: turnedRate,
        twoFacesFound: share(twoFound.length, twos.length),
        noFaceFlagged: share(noneFlagged.length, nones.length),
        falseFlagsPerHour,
        medianDetectionMs: medianMs,
        outcomes,
      },
      targets: [],
      problems: [],
    };
  },
};
