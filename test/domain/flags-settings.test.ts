import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Invalid } from '../../src/domain/errors.ts';
import {
  checkFlagSettings,
  effectiveFlagSettings,
  FLAG_SETTINGS_DEFAULTS,
  parseStoredFlagSettings,
  readFlagSettings,
  storedFlagSettingsText,
} from '../../src/domain/flags/settings.ts';

/** Asserts that `run` throws Invalid naming `field` with `detail`. */
function assertInvalid(run: () => unknown, field: string, detail: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof Invalid, String(error));
    assert.equal(error.field, field);
    assert.equal(error.detail, detail);
    return true;
  });
}

describe('automated flags settings (src/domain/flags/settings.ts)', () => {
  it('fills every key in from the defaults when the exam sets none', () => {
    assert.deepEqual(effectiveFlagSettings(null), {
      no_face_seconds: 5,
      looking_away_seconds: 5,
      multiple_faces_seconds: 2,
      speech_forbidden: false,
      speech_seconds: 3,
      face_match: true,
      face_match_threshold: 0.5,
      detection_hz: 2,
    });
    assert.deepEqual(effectiveFlagSettings({}), FLAG_SETTINGS_DEFAULTS);
  });

  it('lets the exam’s own values win over the defaults, key by key', () => {
    const effective = effectiveFlagSettings({ no_face_seconds: 10, speech_forbidden: true });
    assert.equal(effective.no_face_seconds, 10);
    assert.equal(effective.speech_forbidden, true);
    assert.equal(effective.looking_away_seconds, 5);
  });

  it('reads an object, JSON text from a form, null and empty', () => {
    assert.equal(readFlagSettings({}), undefined);
    assert.equal(readFlagSettings({ flag_settings: null }), null);
    assert.equal(readFlagSettings({ flag_settings: '' }), null);
    assert.deepEqual(readFlagSettings({ flag_settings: { detection_hz: 4, face_match: 'false' } }), {
      detection_hz: 4,
      face_match: false,
    });
    assert.deepEqual(readFlagSettings({ flag_settings: '{"no_face_seconds":"8"}' }), { no_face_seconds: 8 });
  });

  it('answers 422 naming the key for a value out of its range', () => {
    assertInvalid(
      () => checkFlagSettings({ no_face_seconds: 0 }),
      'flag_settings.no_face_seconds',
      'must be from 1 to 600',
    );
    assertInvalid(
      () => checkFlagSettings({ speech_seconds: 601 }),
      'flag_settings.speech_seconds',
      'must be from 1 to 600',
    );
    assertInvalid(
      () => checkFlagSettings({ multiple_faces_seconds: 1.5 }),
      'flag_settings.multiple_faces_seconds',
      'must be a whole number of seconds',
    );
    assertInvalid(
      () => checkFlagSettings({ face_match_threshold: 1.2 }),
      'flag_settings.face_match_threshold',
      'must be from 0 to 1',
    );
    assertInvalid(
      () => checkFlagSettings({ detection_hz: 0.2 }),
      'flag_settings.detection_hz',
      'must be from 0.5 to 10',
    );
    assertInvalid(
      () => checkFlagSettings({ detection_hz: 'fast' }),
      'flag_settings.detection_hz',
      'is not a number',
    );
    assertInvalid(
      () => checkFlagSettings({ face_match: 'maybe' }),
      'flag_settings.face_match',
      'must be one of true, false, 1, 0',
    );
  });

  it('answers 422 naming flag_settings for an unknown key or something that is no object', () => {
    assertInvalid(
      () => checkFlagSettings({ blink_seconds: 3 }),
      'flag_settings',
      'has an unknown key: blink_seconds',
    );
    assertInvalid(() => checkFlagSettings([1, 2]), 'flag_settings', 'must be an object');
    assertInvalid(
      () => readFlagSettings({ flag_settings: 'not json' }),
      'flag_settings',
      'must be an object',
    );
    assertInvalid(() => readFlagSettings({ flag_settings: 5 }), 'flag_settings', 'must be an object');
    // An inherited name is no key of the settings.
    assertInvalid(
      () => checkFlagSettings(JSON.parse('{"constructor":1}')),
      'flag_settings',
      'has an unknown key: constructor',
    );
  });

  it('stores only the keys set, and reads back what it stored, skipping what it cannot read', () => {
    const text = storedFlagSettingsText({ no_face_seconds: 9 });
    assert.equal(text, '{"no_face_seconds":9}');
    assert.deepEqual(parseStoredFlagSettings(text), { no_face_seconds: 9 });
    assert.equal(storedFlagSettingsText(null), null);
    assert.equal(parseStoredFlagSettings(null), null);
    assert.equal(parseStoredFlagSettings('{broken'), null);
    assert.deepEqual(parseStoredFlagSettings('{"no_face_seconds":-1,"gone":true,"detection_hz":3}'), {
      detection_hz: 3,
    });
  });
});
