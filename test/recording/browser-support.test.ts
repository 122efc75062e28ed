/**
 * Whether a browser can record what a candidate page needs (web/shared/browser-support.ts): judged
 * by what the browser offers, never by its name, and refused only when it truly cannot.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  browserAbilities,
  type BrowserAbilities,
  type MediaScope,
  recordingShortfall,
} from '../../web/shared/browser-support.ts';

const EVERYTHING: BrowserAbilities = { recorder: true, formats: true, camera: true, screen: true };

/** A window-like scope offering `parts`. */
function scopeWith(parts: {
  recorder?: { isTypeSupported?: (type: string) => boolean };
  devices?: Record<string, unknown>;
}): MediaScope {
  const recorder =
    parts.recorder === undefined ? undefined : Object.assign(function MediaRecorder() {}, parts.recorder);
  return { MediaRecorder: recorder, navigator: { mediaDevices: parts.devices } };
}

describe('browserAbilities', () => {
  it('reads MediaRecorder, its containers and the media devices the browser offers', () => {
    const scope = scopeWith({
      recorder: { isTypeSupported: (type) => type === 'video/mp4' },
      devices: { getUserMedia() {}, getDisplayMedia() {} },
    });
    assert.deepEqual(browserAbilities(scope), EVERYTHING);
  });

  it('finds nothing in a browser without MediaRecorder or media devices', () => {
    assert.deepEqual(browserAbilities(scopeWith({})), {
      recorder: false,
      formats: false,
      camera: false,
      screen: false,
    });
  });

  it('says no format when MediaRecorder writes neither WebM nor MP4', () => {
    const scope = scopeWith({ recorder: { isTypeSupported: (type) => type === 'video/ogg' } });
    assert.equal(browserAbilities(scope).formats, false);
  });

  it('gives a MediaRecorder that cannot say what it writes the benefit of the doubt', () => {
    const throwing = scopeWith({
      recorder: {
        isTypeSupported: () => {
          throw new Error('not implemented');
        },
      },
    });
    assert.equal(browserAbilities(throwing).formats, true);
  });
});

describe('recordingShortfall', () => {
  it('refuses nothing for a page that records nothing', () => {
    assert.equal(
      recordingShortfall({ camera: false, screen: false }, { ...EVERYTHING, recorder: false }),
      undefined,
    );
  });

  it('names the most basic shortfall first', () => {
    const needs = { camera: true, screen: true };
    assert.equal(recordingShortfall(needs, { ...EVERYTHING, recorder: false, camera: false }), 'recorder');
    assert.equal(recordingShortfall(needs, { ...EVERYTHING, formats: false }), 'formats');
    assert.equal(recordingShortfall(needs, { ...EVERYTHING, camera: false }), 'camera');
    assert.equal(recordingShortfall(needs, { ...EVERYTHING, screen: false }), 'screen');
    assert.equal(recordingShortfall(needs, EVERYTHING), undefined);
  });

  it('asks for screen sharing only when the screen is recorded, and the camera only when it is', () => {
    assert.equal(
      recordingShortfall({ camera: true, screen: false }, { ...EVERYTHING, screen: false }),
      undefined,
    );
    assert.equal(
      recordingShortfall({ camera: false, screen: true }, { ...EVERYTHING, camera: false }),
      undefined,
    );
  });

  it('checks only the recorder for a page that records without knowing what yet (the practice)', () => {
    assert.equal(recordingShortfall('something', { ...EVERYTHING, camera: false, screen: false }), undefined);
    assert.equal(recordingShortfall('something', { ...EVERYTHING, recorder: false }), 'recorder');
  });
});
