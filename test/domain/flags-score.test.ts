import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FLAG_TYPES } from '../../src/domain/flags/flag-types.ts';
import { isInformationalFlag } from '../../src/domain/flags/informational.ts';
import {
  durationFactor,
  FLAG_WEIGHTS,
  flagPoints,
  type ScoredIncident,
  suspicionScore,
} from '../../src/domain/flags/score.ts';

function flag(fields: Partial<ScoredIncident> = {}): ScoredIncident {
  return {
    source: 'automatic',
    type: 'no_face',
    confidence: 1,
    offsetTime: 10,
    endOffsetTime: null,
    dismissedAt: null,
    ...fields,
  };
}

describe('suspicion score (src/domain/flags/score.ts)', () => {
  it('weighs every flag type', () => {
    assert.deepEqual(Object.keys(FLAG_WEIGHTS).sort(), [...FLAG_TYPES].sort());
    for (const weight of Object.values(FLAG_WEIGHTS)) assert.ok(weight > 0 && weight <= 100);
  });

  it('is 0 without flags, and counts neither staff incidents, room events nor dismissed flags', () => {
    assert.equal(suspicionScore([]), 0);
    assert.equal(
      suspicionScore([
        flag({ source: null, type: null }),
        flag({ source: null, type: 'no_face' }),
        flag({ dismissedAt: 1_795_226_927_619 }),
      ]),
      0,
    );
  });

  it('leaves out informational flags (assistive technology, exemptions)', () => {
    assert.equal(flagPoints(flag({ informational: true })), 0);
    assert.equal(suspicionScore([flag({ informational: true }), flag({ informational: false })]), 10);
  });

  it('marks informational only what assistive technology or an exemption sets off', () => {
    const none = { assistiveTechnology: false, exemptions: [] };
    const assistive = { assistiveTechnology: true, exemptions: [] };
    for (const type of FLAG_TYPES) assert.equal(isInformationalFlag(type, none), false, type);
    assert.deepEqual(
      FLAG_TYPES.filter((type) => isInformationalFlag(type, assistive)),
      ['looking_away', 'speech', 'virtual_camera'],
    );
    const noCamera = { assistiveTechnology: false, exemptions: [{ check: 'webcam' as const, reason: 'x' }] };
    assert.deepEqual(
      FLAG_TYPES.filter((type) => isInformationalFlag(type, noCamera)),
      ['no_face', 'multiple_faces', 'looking_away', 'face_mismatch', 'virtual_camera'],
    );
    const noFullScreen = {
      assistiveTechnology: false,
      exemptions: [{ check: 'fullscreen' as const, reason: 'x' }],
    };
    assert.deepEqual(
      FLAG_TYPES.filter((type) => isInformationalFlag(type, noFullScreen)),
      ['fullscreen_exit'],
    );
  });

  it('multiplies weight, confidence and the duration factor, and rounds the sum down', () => {
    // no_face 10 × 0.55 × 1 = 5.5 → 5
    assert.equal(suspicionScore([flag({ confidence: 0.55 })]), 5);
    // A one-minute episode counts twice: 10 × 1 × 2 = 20.
    assert.equal(suspicionScore([flag({ offsetTime: 0, endOffsetTime: 60 })]), 20);
    // 10 × 0.3 three times is 9 even where the floating sum is 8.999…
    assert.equal(
      suspicionScore([flag({ confidence: 0.3 }), flag({ confidence: 0.3 }), flag({ confidence: 0.3 })]),
      9,
    );
    assert.equal(flagPoints(flag({ type: 'virtual_camera' })), 20);
  });

  it('caps the duration factor at 3 and ignores an end before the start', () => {
    assert.equal(durationFactor(0, null), 1);
    assert.equal(durationFactor(30, 30), 1);
    assert.equal(durationFactor(30, 10), 1);
    assert.equal(durationFactor(0, 30), 1.5);
    assert.equal(durationFactor(0, 120), 3);
    assert.equal(durationFactor(0, 3600), 3);
  });

  it('keeps confidence within 0..1 and the score at most 100', () => {
    assert.equal(flagPoints(flag({ confidence: 7 })), 10);
    assert.equal(flagPoints(flag({ confidence: -1 })), 0);
    assert.equal(flagPoints(flag({ confidence: null })), 0);
    assert.equal(flagPoints(flag({ type: 'not_a_type' })), 0);
    const many = Array.from({ length: 20 }, () =>
      flag({ type: 'multiple_faces', offsetTime: 0, endOffsetTime: 600 }),
    );
    assert.equal(suspicionScore(many), 100);
  });
});
