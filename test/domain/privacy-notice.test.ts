/**
 * The privacy panel's facts (src/domain/room/privacy.ts): generated from the exam's settings, the
 * candidate's exemptions and the institute's retention per kind; its version follows every fact
 * and the terms; the acceptance record names both versions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptanceRecord, privacyNotice } from '../../src/domain/room/privacy.ts';
import { effectiveRetention } from '../../src/domain/retention/retention.ts';

const EXAM = {
  webCam: true,
  screenShare: false,
  mobileCam: false,
  uploadAnswers: false,
  automatedFlags: false,
};
const INSTITUTE = {
  name: 'Example University',
  privacyContact: null,
  dpoName: null,
  dpoEmail: null,
  appealPeriodDays: 14,
};
const RETENTION = effectiveRetention(new Map(), 30);
const NONE = { exemptions: [] };

describe('privacyNotice', () => {
  it('states the camera, the microphone, both photos and the events of a camera exam', () => {
    const notice = privacyNotice(EXAM, NONE, INSTITUTE, RETENTION, null);
    assert.deepEqual(notice.recorded, ['camera', 'microphone', 'id_photo', 'face_photo', 'events']);
    assert.deepEqual(notice.onDevice, ['equipment_checks']);
    assert.deepEqual(
      notice.retention.map((fact) => [fact.kind, fact.days, fact.rule]),
      [
        ['id_photo', 30, 'after_verdict_or_session_end'],
        ['face_photo', 30, 'after_session_end'],
        ['recordings', 30, 'after_session_end'],
        ['incidents', 30, 'after_session_end'],
      ],
    );
  });

  it('leaves out a photo the candidate is exempt from, and its keeping', () => {
    const exempt = { exemptions: [{ check: 'id_photo', reason: 'no card' }] } as Parameters<
      typeof privacyNotice
    >[1];
    const notice = privacyNotice(EXAM, exempt, INSTITUTE, RETENTION, null);
    assert.equal(notice.recorded.includes('id_photo'), false);
    assert.equal(
      notice.retention.some((fact) => fact.kind === 'id_photo'),
      false,
    );
  });

  it('changes its version with the terms and with any stated fact, and only then', () => {
    const base = privacyNotice(EXAM, NONE, INSTITUTE, RETENTION, 'Work alone.').version;
    assert.equal(privacyNotice(EXAM, NONE, INSTITUTE, RETENTION, 'Work alone.').version, base);
    const variants = [
      privacyNotice(EXAM, NONE, INSTITUTE, RETENTION, 'Work alone!').version,
      privacyNotice(EXAM, NONE, INSTITUTE, RETENTION, null).version,
      privacyNotice({ ...EXAM, automatedFlags: true }, NONE, INSTITUTE, RETENTION, 'Work alone.').version,
      privacyNotice(EXAM, NONE, { ...INSTITUTE, appealPeriodDays: 7 }, RETENTION, 'Work alone.').version,
      privacyNotice(EXAM, NONE, { ...INSTITUTE, dpoEmail: 'dpo@x.org' }, RETENTION, 'Work alone.').version,
      privacyNotice(EXAM, NONE, INSTITUTE, effectiveRetention(new Map(), 31), 'Work alone.').version,
    ];
    for (const version of variants) assert.notEqual(version, base);
    assert.equal(new Set(variants).size, variants.length);
  });
});

describe('acceptanceRecord', () => {
  it('names the terms and the panel, or the panel alone', () => {
    assert.equal(acceptanceRecord('ab12', '0011223344556677'), 'terms:ab12;privacy:0011223344556677');
    assert.equal(acceptanceRecord(null, '0011223344556677'), 'privacy:0011223344556677');
  });
});
