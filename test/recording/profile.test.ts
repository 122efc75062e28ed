/**
 * The recording profile (web/shared/recording/profile.ts): what each level asks a MediaRecorder for
 * in each browser, what it costs per candidate-hour, and when the room steps down a level.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  adaptedQuality,
  bitsPerSecond,
  type Capabilities,
  constraintsFor,
  megabytesPerHour,
  profileFor,
  type QUALITIES,
  queueGrowing,
  stepDown,
  uplinkNeededMbit,
} from '../../web/shared/recording/profile.ts';

/** A browser that writes exactly `types`. */
function browser(...types: string[]): Capabilities {
  return { isTypeSupported: (type) => types.includes(type) };
}

const CHROMIUM = browser(
  'video/webm;codecs=vp9,opus',
  'video/webm;codecs=vp8,opus',
  'video/webm;codecs=vp9',
  'video/webm;codecs=vp8',
  'video/webm;codecs=opus',
  'video/webm',
);
const OLD_FIREFOX = browser('video/webm;codecs=vp8,opus', 'video/webm;codecs=vp8', 'video/webm');
const SAFARI = browser('video/mp4;codecs=avc1.42E01E,mp4a.40.2', 'video/mp4;codecs=avc1.42E01E', 'video/mp4');

/** Webcam and screen together at `quality`, in bit/s. */
function total(quality: (typeof QUALITIES)[number]): number {
  return (
    bitsPerSecond(profileFor('webcam', quality, CHROMIUM)) +
    bitsPerSecond(profileFor('screen', quality, CHROMIUM))
  );
}

describe('profileFor', () => {
  it('records VP9 where the browser writes it, VP8 where not, H.264 MP4 in Safari', () => {
    assert.equal(profileFor('webcam', 'standard', CHROMIUM).mimeType, 'video/webm;codecs=vp9,opus');
    assert.equal(profileFor('screen', 'standard', CHROMIUM).mimeType, 'video/webm;codecs=vp9');
    assert.equal(profileFor('webcam', 'standard', OLD_FIREFOX).mimeType, 'video/webm;codecs=vp8,opus');
    assert.equal(profileFor('screen', 'standard', OLD_FIREFOX).mimeType, 'video/webm;codecs=vp8');
    assert.equal(profileFor('webcam', 'standard', SAFARI).mimeType, 'video/mp4;codecs=avc1.42E01E,mp4a.40.2');
    assert.equal(profileFor('screen', 'standard', SAFARI).mimeType, 'video/mp4;codecs=avc1.42E01E');
  });

  it('leaves the choice to the browser when it names none of the types, or throws on asking', () => {
    assert.equal(profileFor('screen', 'low', browser()).mimeType, undefined);
    const throwing: Capabilities = {
      isTypeSupported: () => {
        throw new Error('not here');
      },
    };
    assert.equal(profileFor('screen', 'low', throwing).mimeType, undefined);
  });

  it('records sound alone as Opus and asks no video bitrate', () => {
    const profile = profileFor('webcam', 'standard', CHROMIUM, { video: false, audio: true });
    assert.equal(profile.mimeType, 'video/webm;codecs=opus');
    assert.equal(profile.videoBitsPerSecond, 0);
    assert.ok(profile.audioBitsPerSecond > 0);
    assert.equal(profile.video, undefined);
  });

  it('asks no audio bitrate for a picture without sound', () => {
    const profile = profileFor('webcam', 'standard', CHROMIUM, { video: true, audio: false });
    assert.equal(profile.audioBitsPerSecond, 0);
    assert.equal(profile.mimeType, 'video/webm;codecs=vp9');
  });

  it('costs at most 100 MB per candidate-hour and 180 kbit/s by default, less at low, more at high', () => {
    assert.ok(total('standard') <= 180_000, `standard asks ${total('standard')} bit/s`);
    assert.ok(megabytesPerHour(total('standard')) <= 100);
    assert.ok(total('low') < total('standard'));
    assert.ok(total('high') > total('standard'));
  });

  it('keeps the webcam small, the screen large enough for 14 px text, and the screen slow', () => {
    const webcam = profileFor('webcam', 'standard', CHROMIUM).video;
    const screen = profileFor('screen', 'standard', CHROMIUM).video;
    assert.ok(webcam !== undefined && screen !== undefined);
    assert.ok(webcam.maxWidth <= 640 && webcam.maxHeight >= 240);
    assert.ok(screen.maxWidth >= 1920 && screen.maxHeight >= 1080);
    assert.ok(screen.frameRate <= 5);
    assert.equal(screen.contentHint, 'text');
    assert.equal(webcam.contentHint, 'motion');
    assert.deepEqual(constraintsFor(screen), {
      width: { max: screen.maxWidth },
      height: { max: screen.maxHeight },
      frameRate: { max: screen.frameRate },
    });
  });

  it('keeps the size of the level it began at after a step down, with the lower bitrate', () => {
    const stepped = profileFor('webcam', 'standard', CHROMIUM, { video: true, audio: true }, 'high');
    const high = profileFor('webcam', 'high', CHROMIUM);
    assert.equal(stepped.video?.maxWidth, high.video?.maxWidth);
    assert.equal(stepped.videoBitsPerSecond, profileFor('webcam', 'standard', CHROMIUM).videoBitsPerSecond);
  });
});

describe('stepping down', () => {
  it('steps one level down and never below low', () => {
    assert.equal(stepDown('high'), 'standard');
    assert.equal(stepDown('standard'), 'low');
    assert.equal(stepDown('low'), 'low');
  });

  it('steps down when the measured line is slower than the level needs', () => {
    const slow = uplinkNeededMbit('standard') - 0.01;
    assert.equal(
      adaptedQuality('standard', { measuredMbit: slow, waiting: 0, history: [], recorders: 2 }),
      'low',
    );
    assert.equal(
      adaptedQuality('high', { measuredMbit: 0.3, waiting: 0, history: [], recorders: 2 }),
      'standard',
    );
  });

  it('keeps the level on a fast enough line, or when nothing was measured', () => {
    assert.equal(
      adaptedQuality('standard', { measuredMbit: 1, waiting: 0, history: [], recorders: 2 }),
      'standard',
    );
    assert.equal(
      adaptedQuality('standard', { measuredMbit: null, waiting: 0, history: [], recorders: 2 }),
      'standard',
    );
    assert.equal(
      adaptedQuality('standard', { measuredMbit: 0, waiting: 0, history: [], recorders: 2 }),
      'standard',
    );
  });

  it('stays at low however slow the line', () => {
    assert.equal(
      adaptedQuality('low', { measuredMbit: 0.01, waiting: 99, history: [10, 20, 30], recorders: 2 }),
      'low',
    );
  });

  it('steps down when the queue grew at each of the last three intervals past a backlog', () => {
    assert.equal(
      adaptedQuality('standard', { measuredMbit: null, waiting: 8, history: [2, 4, 6], recorders: 2 }),
      'low',
    );
    assert.ok(queueGrowing({ waiting: 8, history: [0, 2, 4, 6], recorders: 2 }));
  });

  it('does not step down for a queue that shrank once, grew for fewer intervals, or holds little', () => {
    assert.equal(queueGrowing({ waiting: 8, history: [2, 6, 5], recorders: 2 }), false);
    assert.equal(queueGrowing({ waiting: 8, history: [4, 6], recorders: 2 }), false);
    assert.equal(queueGrowing({ waiting: 3, history: [0, 1, 2], recorders: 1 }), false);
    assert.equal(queueGrowing({ waiting: 6, history: [6, 6, 6], recorders: 2 }), false);
  });
});
