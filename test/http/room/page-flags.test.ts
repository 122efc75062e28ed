/**
 * The room's automated-flags logic that needs no browser (web/room/flags/): the episode
 * keeper (episodes.ts), the virtual-camera name check (signals.ts) and the face detector's
 * adaptive rate and signal rules (face.ts, driven without its constructor, which needs a page).
 * The modules are the page's own plain JavaScript, imported as they are; the browser tests
 * (test/browser/room-flags-smoke.test.ts, flags-room.test.ts) cover the rest in Chromium.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

// The page's modules are JSDoc-typed JavaScript that this project's tsc does not read (no allowJs),
// so the test states the part of their shape it uses and imports them by address.

interface FlagReport {
  key: string;
  type: string;
  confidence: number;
  offset_time: number;
  end_offset_time: number | null;
}

interface EpisodesInstance {
  set: (type: string, active: boolean, confidence: number, thresholdMs: number, graceMs?: number) => void;
  closeAll: () => void;
  isOpen: (type: string) => boolean;
}

interface EpisodesModule {
  END_GRACE_MS: number;
  Episodes: new (
    report: (report: FlagReport) => void,
    offsetAt: () => number,
    now?: () => number,
  ) => EpisodesInstance;
}

interface SignalsModule {
  VIRTUAL_CAMERA_NAMES: readonly string[];
  MAGNIFIER_CAMERA_NAMES: readonly string[];
  isVirtualCamera: (label: string) => boolean;
  isMagnifierCamera: (label: string) => boolean;
  virtualCameraConfidence: (label: string) => number;
}

interface HumanFace {
  score: number;
  embedding?: number[];
  rotation?: { angle: { yaw: number; pitch: number; roll: number } } | null;
}

interface FaceSettings {
  no_face_seconds: number;
  looking_away_seconds: number;
  multiple_faces_seconds: number;
  face_match_threshold: number;
}

/** The fields and methods of a FaceDetector that adapt(), detectOnce() and compare() use. */
interface FaceDetectorState {
  options: {
    settings: FaceSettings;
    episodes: { set: EpisodesInstance['set'] };
    reportRate: (hz: number) => void;
    log: (message: string) => void;
  };
  human: { match: { similarity: (a: number[], b: number[]) => number } } | null;
  video: object;
  target: number;
  hz: number;
  times: number[];
  lastMs: number;
  count: number;
  total: number;
  backend: string;
  stopped: boolean;
  reference: number[] | null;
  lastMatch: number;
  mismatches: number;
  stop(): void;
  detectWith(input: object, describe: boolean): Promise<{ face: HumanFace[] }>;
  adapt(took: number): void;
  detectOnce(started: number): Promise<void>;
}

interface FaceModule {
  BUDGET: number;
  MIN_HZ: number;
  MATCH_EVERY_MS: number;
  FaceDetector: { prototype: object };
}

const flagsDirectory = new URL('../../../web/room/flags/', import.meta.url);

async function load<T>(file: string): Promise<T> {
  return (await import(new URL(file, flagsDirectory).href)) as T;
}

const { Episodes, END_GRACE_MS } = await load<EpisodesModule>('episodes.ts');
const {
  VIRTUAL_CAMERA_NAMES,
  MAGNIFIER_CAMERA_NAMES,
  isVirtualCamera,
  isMagnifierCamera,
  virtualCameraConfidence,
} = await load<SignalsModule>('signals.ts');
const { FaceDetector, BUDGET, MIN_HZ, MATCH_EVERY_MS } = await load<FaceModule>('face.ts');

/**
 * An episode keeper on a clock the test moves: `at(ms)` sets the clock, and the exam's offset is
 * 100 s plus the clock in seconds (the detectors started 100 s into the exam).
 */
function keeper() {
  let ms = 0;
  const reports: FlagReport[] = [];
  const episodes = new Episodes(
    (report) => reports.push(report),
    () => 100 + ms / 1000,
    () => ms,
  );
  return {
    episodes,
    reports,
    at: (time: number) => {
      ms = time;
      return episodes;
    },
  };
}

describe('room flags: episodes', () => {
  it('opens an episode only once the signal has held for its threshold, starting where the signal began', () => {
    const { reports, at } = keeper();
    for (let time = 0; time < 5000; time += 500) at(time).set('no_face', true, 0.8, 5000);
    assert.equal(reports.length, 0);
    at(5000).set('no_face', true, 0.8, 5000);
    assert.equal(reports.length, 1);
    assert.deepEqual(
      { ...reports[0], key: undefined },
      {
        key: undefined,
        type: 'no_face',
        confidence: 0.8,
        offset_time: 100,
        end_offset_time: null,
      },
    );
    assert.match(reports[0]?.key ?? '', /^no_face-[0-9a-z]+$/);
    assert.ok((reports[0]?.key.length ?? 0) <= 64);
    // Held on: no report per frame.
    for (let time = 5500; time <= 8000; time += 500) at(time).set('no_face', true, 0.8, 5000);
    assert.equal(reports.length, 1);
  });

  it('reports the end once, under the same key, when the signal has been gone for the grace period', () => {
    const { episodes, reports, at } = keeper();
    for (let time = 0; time <= 6000; time += 500) at(time).set('no_face', true, 0.8, 5000);
    assert.ok(episodes.isOpen('no_face'));
    // Gone, but for less than the grace (1.5 s since last seen): still the same episode.
    at(6500).set('no_face', false, 0, 5000);
    at(7000).set('no_face', false, 0, 5000);
    assert.equal(reports.length, 1);
    assert.ok(episodes.isOpen('no_face'));
    at(6000 + END_GRACE_MS).set('no_face', false, 0, 5000);
    assert.equal(reports.length, 2);
    // The end is the offset at which the end was noticed (last seen + the grace).
    assert.deepEqual(reports[1], { ...reports[0], end_offset_time: 107.5 });
    assert.ok(!episodes.isOpen('no_face'));
    at(8000).set('no_face', false, 0, 5000);
    at(9000).set('no_face', false, 0, 5000);
    assert.equal(reports.length, 2);
  });

  it('does not split an episode over a missed frame shorter than the grace', () => {
    const { episodes, reports, at } = keeper();
    at(0).set('no_face', true, 0.8, 3000);
    at(1000).set('no_face', false, 0, 3000);
    at(2000).set('no_face', true, 0.8, 3000);
    at(3000).set('no_face', true, 0.8, 3000);
    assert.equal(reports.length, 1);
    assert.equal(reports[0]?.offset_time, 100, 'the start is the first frame, before the missed one');
    at(4000).set('no_face', false, 0, 3000);
    at(5000).set('no_face', true, 0.8, 3000);
    assert.ok(episodes.isOpen('no_face'));
    assert.equal(reports.length, 1);
  });

  it('forgets a blip shorter than the threshold and counts a later signal from its own start', () => {
    const { episodes, reports, at } = keeper();
    at(0).set('multiple_faces', true, 0.9, 2000);
    at(1000).set('multiple_faces', true, 0.9, 2000);
    at(2600).set('multiple_faces', false, 0, 2000);
    assert.equal(reports.length, 0);
    assert.ok(!episodes.isOpen('multiple_faces'));
    at(3000).set('multiple_faces', true, 0.9, 2000);
    at(4500).set('multiple_faces', true, 0.9, 2000);
    assert.equal(reports.length, 0, 'the blip does not count towards the threshold');
    at(5000).set('multiple_faces', true, 0.9, 2000);
    assert.equal(reports.length, 1);
    assert.equal(reports[0]?.offset_time, 103);
  });

  it('ignores an end for a signal it never saw', () => {
    const { reports, at } = keeper();
    at(0).set('speech', false, 0, 3000);
    at(10_000).set('speech', false, 0, 3000);
    assert.equal(reports.length, 0);
  });

  it('reports the highest confidence seen, clamped to 0..1 with two decimals', () => {
    const { reports, at } = keeper();
    at(0).set('looking_away', true, 0.333, 1000);
    at(500).set('looking_away', true, 0.6789, 1000);
    at(1000).set('looking_away', true, 0.4, 1000);
    assert.equal(reports[0]?.confidence, 0.68);
    at(1500).set('looking_away', true, 1.7, 1000);
    at(5000).set('looking_away', false, 0, 1000);
    assert.equal(reports[1]?.confidence, 1, 'the end report carries the raised confidence');

    const low = keeper();
    low.at(0).set('no_face', true, -0.2, 0);
    assert.equal(low.reports[0]?.confidence, 0);
  });

  it('keeps each type on its own: thresholds, keys and ends', () => {
    const { episodes, reports, at } = keeper();
    at(0).set('no_face', true, 1, 5000);
    at(1000).set('multiple_faces', true, 0.7, 2000);
    at(3000).set('multiple_faces', true, 0.7, 2000);
    assert.deepEqual(
      reports.map((report) => [report.type, report.offset_time]),
      [['multiple_faces', 101]],
    );
    at(5000).set('no_face', true, 1, 5000);
    at(5000).set('multiple_faces', false, 0, 2000);
    assert.deepEqual(
      reports.map((report) => [report.type, report.offset_time, report.end_offset_time]),
      [
        ['multiple_faces', 101, null],
        ['no_face', 100, null],
        ['multiple_faces', 101, 105],
      ],
    );
    assert.notEqual(reports[0]?.key, reports[1]?.key);
    assert.ok(episodes.isOpen('no_face'));
    assert.ok(!episodes.isOpen('multiple_faces'));
  });

  it('opens and ends at once for the browser signals (threshold 0, grace 0), with a new key each time', () => {
    const { episodes, reports, at } = keeper();
    at(0).set('tab_switch', true, 1, 0, 0);
    assert.deepEqual(
      { ...reports[0], key: undefined },
      {
        key: undefined,
        type: 'tab_switch',
        confidence: 1,
        offset_time: 100,
        end_offset_time: null,
      },
    );
    at(0).set('tab_switch', false, 1, 0, 0);
    assert.equal(reports[1]?.end_offset_time, 100, 'an end at the same moment is the start');
    at(4000).set('tab_switch', true, 1, 0, 0);
    at(6000).set('tab_switch', false, 1, 0, 0);
    assert.equal(reports.length, 4);
    assert.equal(reports[3]?.key, reports[2]?.key);
    assert.notEqual(reports[2]?.key, reports[0]?.key);
    assert.deepEqual([reports[2]?.offset_time, reports[3]?.end_offset_time], [104, 106]);
    assert.ok(!episodes.isOpen('tab_switch'));
  });

  it('never reports an end before the start when the exam offset is not known at the end', () => {
    let offset = 250;
    const reports: FlagReport[] = [];
    const episodes = new Episodes(
      (report) => reports.push(report),
      () => offset,
      () => 0,
    );
    episodes.set('second_screen', true, 1, 0, 0);
    offset = 0;
    episodes.closeAll();
    assert.equal(reports[1]?.end_offset_time, 250);
  });

  it('closeAll ends every open episode and forgets signals that never opened one', () => {
    const { episodes, reports, at } = keeper();
    at(0).set('no_face', true, 1, 1000);
    at(0).set('tab_switch', true, 1, 0, 0);
    at(1000).set('no_face', true, 1, 1000);
    at(1000).set('speech', true, 0.8, 3000);
    assert.equal(reports.length, 2);
    at(2000).closeAll();
    assert.deepEqual(
      reports.slice(2).map((report) => [report.type, report.offset_time, report.end_offset_time]),
      [
        ['no_face', 100, 102],
        ['tab_switch', 100, 102],
      ],
    );
    const keyOf = (type: string, list: FlagReport[]) => list.find((report) => report.type === type)?.key;
    for (const type of ['no_face', 'tab_switch'])
      assert.equal(keyOf(type, reports.slice(2)), keyOf(type, reports));
    for (const type of ['no_face', 'tab_switch', 'speech']) assert.ok(!episodes.isOpen(type));
    at(10_000).set('speech', true, 0.8, 3000);
    assert.equal(reports.length, 2 + 2, 'the unopened speech signal was forgotten, not kept running');
    episodes.closeAll();
    assert.equal(reports.length, 4);
  });
});

describe('room flags: virtual camera names', () => {
  it('matches the known virtual cameras, whatever the case', () => {
    for (const label of [
      'OBS Virtual Camera',
      'obs-camera',
      'ManyCam Virtual Webcam',
      'Snap Camera',
      'XSplit VCam',
      'e2eSoft VCam',
      'e2esoft vcam (1234:5678)',
      'CamTwist',
      'SplitCam Video Driver',
      'CyberLink YouCam 10',
      'Virtual Camera',
    ]) {
      assert.ok(isVirtualCamera(label), label);
    }
  });

  it('matches every listed name as a whole word in a label', () => {
    for (const name of VIRTUAL_CAMERA_NAMES) assert.ok(isVirtualCamera(`Acme ${name.toUpperCase()} 2`), name);
  });

  it('does not match real cameras, nor a listed name inside a longer word', () => {
    for (const label of [
      'Integrated Camera',
      'Integrated Camera (04f2:b604)',
      'Integrated Webcam',
      'FaceTime HD Camera',
      'Logitech HD Pro Webcam C920',
      // Whole words only: a real camera brand that starts with "obs", a name containing it, and
      // VirtualBox's pass-through of the host's real camera.
      'OBSBOT Tiny 4K',
      'Jobs Cam',
      'VirtualBox Webcam - Integrated Camera',
      'Snapdragon Camera',
      // The browser hides labels until the camera is allowed.
      '',
    ]) {
      assert.ok(!isVirtualCamera(label), label);
    }
  });
});

describe('room flags: screen magnifier cameras', () => {
  it('flags a magnifier camera as a virtual camera, with less confidence than a deceiving one', () => {
    for (const label of ['ZoomText Camera', 'Dolphin SuperNova Camera', 'Acme Magnifier Virtual Camera']) {
      assert.ok(isMagnifierCamera(label), label);
      assert.ok(isVirtualCamera(label), label);
      assert.equal(virtualCameraConfidence(label), 0.5, label);
    }
    for (const name of MAGNIFIER_CAMERA_NAMES) assert.ok(isMagnifierCamera(`Acme ${name} 2`), name);
    assert.equal(virtualCameraConfidence('OBS Virtual Camera'), 0.9);
    assert.equal(virtualCameraConfidence('Integrated Webcam'), 0);
    assert.ok(!isMagnifierCamera('Integrated Webcam'));
  });
});

/** The episode calls a face detector made, type by type (the last call of each type). */
type Calls = Map<string, { active: boolean; confidence: number; thresholdMs: number; graceMs?: number }>;

const SETTINGS: FaceSettings = {
  no_face_seconds: 5,
  looking_away_seconds: 4,
  multiple_faces_seconds: 2,
  face_match_threshold: 0.5,
};

/**
 * A FaceDetector without its constructor (which makes a video element): the state its rate and
 * signal rules read, a recorder for episodes, rates and log lines, and stop() without the page's
 * timer (the real one clears a window timer and the video).
 */
function detector(hz = 2) {
  const state = Object.create(FaceDetector.prototype) as FaceDetectorState;
  const calls: Calls = new Map();
  const rates: number[] = [];
  const lines: string[] = [];
  Object.assign(state, {
    options: {
      settings: SETTINGS,
      episodes: {
        set(type: string, active: boolean, confidence: number, thresholdMs: number, graceMs?: number) {
          calls.set(type, { active, confidence, thresholdMs, graceMs });
        },
      },
      reportRate: (rate: number) => rates.push(rate),
      log: (line: string) => lines.push(line),
    },
    human: null,
    video: {},
    target: hz,
    hz,
    times: [],
    lastMs: 0,
    count: 0,
    total: 0,
    backend: 'wasm',
    stopped: false,
    reference: null,
    lastMatch: 0,
    mismatches: 0,
  });
  state.stop = () => {
    state.stopped = true;
  };
  return { state, calls, rates, lines };
}

/** Feeds `count` detections of `ms` each to the rate rule. */
function detections(state: FaceDetectorState, ms: number, count = 5): void {
  for (let index = 0; index < count; index += 1) state.adapt(ms);
}

describe('room flags: the face detector adapts its rate', () => {
  it('judges nothing before five detections', () => {
    const { state, rates } = detector();
    detections(state, 900, 4);
    assert.equal(state.hz, 2);
    assert.equal(rates.length, 0);
    assert.equal(state.lastMs, 900);
  });

  it('keeps the exam rate, never above it, when detections fit the budget', () => {
    const { state, rates } = detector();
    detections(state, 10, 12);
    assert.equal(state.hz, 2);
    assert.equal(rates.length, 0);
  });

  it('lowers the rate, in steps of 0.5 Hz, to the fastest that fits a quarter of a core', () => {
    assert.equal(BUDGET, 0.25);
    const { state, rates } = detector();
    detections(state, 200);
    assert.equal(state.hz, 1, '200 ms at 1 Hz is 20 % of a core; at 1.5 Hz, 30 %');
    assert.deepEqual(rates, [1]);
    assert.equal(state.times.length, 0, 'the next judgement waits for five new detections');
    detections(state, 150);
    assert.equal(state.hz, 1, 'room for 1.5 Hz (22.5 %) but not to spare: no raise');
    detections(state, 400);
    assert.equal(state.hz, MIN_HZ);
    assert.deepEqual(rates, [1, 0.5]);
  });

  it('averages the last five detections, so one slow detection does not lower the rate', () => {
    const { state, rates } = detector();
    detections(state, 40, 4);
    state.adapt(400);
    assert.equal(state.hz, 2, 'an average of 112 ms still fits 2 Hz');
    assert.equal(rates.length, 0);
  });

  it('stays at 0.5 Hz between a quarter and half a core, and stops above half a core', () => {
    const slow = detector();
    detections(slow.state, 900);
    assert.equal(slow.state.hz, MIN_HZ);
    assert.ok(!slow.state.stopped);
    detections(slow.state, 900);
    assert.deepEqual(slow.rates, [0.5], 'nothing more to report at the lowest rate');

    const tooSlow = detector();
    detections(tooSlow.state, 1100);
    assert.ok(tooSlow.state.stopped);
    assert.deepEqual(tooSlow.rates, [0]);
    assert.ok(tooSlow.lines.some((line) => line.startsWith('face detection stopped on wasm: 1100 ms')));
  });

  it('raises the rate back only with room to spare', () => {
    const { state, rates } = detector();
    detections(state, 200);
    assert.equal(state.hz, 1);
    detections(state, 110);
    assert.equal(state.hz, 1, '2 Hz of 110 ms is 22 %: fits, but without 20 % of room');
    detections(state, 90);
    assert.equal(state.hz, 2);
    assert.deepEqual(rates, [1, 2]);
  });

  it('logs the first detection and every tenth with the average', () => {
    const { state, lines } = detector();
    detections(state, 30, 10);
    assert.deepEqual(lines, [
      'first detection on wasm: 30 ms',
      '10 detections on wasm, 30 ms each on average, at 2 Hz',
    ]);
  });
});

/** A face facing the camera, or turned by `yaw` and `pitch` radians. */
function face(score: number, yaw = 0, pitch = 0, embedding?: number[]): HumanFace {
  return { score, rotation: { angle: { yaw, pitch, roll: 0 } }, ...(embedding ? { embedding } : {}) };
}

/** One detection by `state` on a frame where Human finds `faces`. */
async function detectOn(state: FaceDetectorState, faces: HumanFace[], started = 0): Promise<boolean[]> {
  const described: boolean[] = [];
  state.detectWith = (_input, describe) => {
    described.push(describe);
    return Promise.resolve({ face: faces });
  };
  await state.detectOnce(started);
  return described;
}

describe('room flags: the face signals of one detection', () => {
  it('raises no_face when no face scores 0.5, with the exam threshold and a grace of two detections', async () => {
    const { state, calls } = detector();
    await detectOn(state, [face(0.4)]);
    assert.deepEqual(calls.get('no_face'), {
      active: true,
      confidence: 0.8,
      thresholdMs: 5000,
      graceMs: 1500,
    });
    assert.equal(calls.get('multiple_faces')?.active, false);
    assert.equal(calls.get('looking_away')?.active, false);

    const slow = detector(0.5);
    await detectOn(slow.state, []);
    assert.deepEqual(slow.calls.get('no_face'), {
      active: true,
      confidence: 1,
      thresholdMs: 5000,
      graceMs: 4000,
    });
  });

  it('raises multiple_faces with the second face’s score as its confidence', async () => {
    const { state, calls } = detector();
    await detectOn(state, [face(0.95), face(0.7), face(0.3)]);
    assert.deepEqual(calls.get('multiple_faces'), {
      active: true,
      confidence: 0.7,
      thresholdMs: 2000,
      graceMs: 1500,
    });
    assert.equal(calls.get('no_face')?.active, false);
    assert.equal(calls.get('looking_away')?.active, false, 'head turn is judged on one face only');
  });

  it('raises looking_away past about 35° of yaw or pitch, not below', async () => {
    const { state, calls } = detector();
    await detectOn(state, [face(0.9, 0.5, -0.5)]);
    assert.equal(calls.get('looking_away')?.active, false);
    await detectOn(state, [face(0.9, -0.75)]);
    assert.deepEqual(calls.get('looking_away'), {
      active: true,
      confidence: 0.75,
      thresholdMs: 4000,
      graceMs: 1500,
    });
    await detectOn(state, [face(0.9, 0, 0.66)]);
    assert.equal(calls.get('looking_away')?.active, true);
    assert.equal(calls.get('no_face')?.active, false);
  });

  it('compares with the face photo every ten seconds and raises face_mismatch after two misses in a row', async () => {
    assert.equal(MATCH_EVERY_MS, 10_000);
    const { state, calls } = detector();
    let similarity = 0.3;
    state.reference = [1, 0];
    state.human = { match: { similarity: () => similarity } };
    state.lastMatch = -MATCH_EVERY_MS;
    assert.deepEqual(await detectOn(state, [face(0.9, 0, 0, [0, 1])], 0), [true]);
    assert.deepEqual(calls.get('face_mismatch'), {
      active: false,
      confidence: 0.9,
      thresholdMs: 0,
      graceMs: 0,
    });
    assert.deepEqual(await detectOn(state, [face(0.9, 0, 0, [0, 1])], 5000), [false], 'not yet ten seconds');
    assert.deepEqual(await detectOn(state, [face(0.9, 0, 0, [0, 1])], 10_000), [true]);
    assert.equal(calls.get('face_mismatch')?.active, true);
    // Two faces: no comparison, and the count of misses stands.
    await detectOn(state, [face(0.9, 0, 0, [0, 1]), face(0.9, 0, 0, [0, 1])], 20_000);
    assert.equal(state.lastMatch, 10_000);
    similarity = 0.8;
    await detectOn(state, [face(0.9, 0, 0, [0, 1])], 20_000);
    assert.equal(calls.get('face_mismatch')?.active, false, 'a match ends it');
    assert.equal(state.mismatches, 0);
  });

  it('compares nothing without a usable face photo', async () => {
    const { state, calls } = detector();
    state.lastMatch = -MATCH_EVERY_MS;
    assert.deepEqual(await detectOn(state, [face(0.9, 0, 0, [0, 1])]), [false]);
    assert.equal(calls.has('face_mismatch'), false);
  });
});
