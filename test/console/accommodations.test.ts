/**
 * Accommodations as the console edits and shows them (web/console/src/lib/accommodations.ts): the
 * form's round trip to the API's object, the bulk edit's chosen keys, a refused exemption's message
 * matched back to its check, the short phrases of the list and the wall, the readiness words, and
 * the rest breaks the review timeline draws (web/console/src/lib/review-time.ts).
 */
import '../helpers/console-language.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  accommodationError,
  accommodationPhrases,
  accommodationsOf,
  accommodationsToForm,
  accommodationsValue,
  breakWords,
  emptyAccommodationsForm,
  practiceOf,
  practiceWords,
  type AccommodationsRecord,
} from '../../web/console/src/lib/accommodations.ts';
import { restSpans, timedIncidents } from '../../web/console/src/lib/review-time.ts';

const FULL: AccommodationsRecord = {
  extra_time_minutes: 10,
  extra_time_percent: 50,
  breaks: { count: 2, minutes: 10 },
  exemptions: [
    { check: 'webcam', reason: 'No camera' },
    { check: 'id_photo', reason: 'Blind' },
  ],
  assistive_technology: true,
  note: 'Screen reader',
};

describe('console accommodations', () => {
  it('turns a record into the form and back into the same object', () => {
    assert.deepEqual(accommodationsValue(accommodationsToForm(FULL)), FULL);
    assert.deepEqual(accommodationsValue(emptyAccommodationsForm()), {
      extra_time_minutes: 0,
      extra_time_percent: 0,
      breaks: null,
      exemptions: [],
      assistive_technology: false,
      note: null,
    });
  });

  it('sends only the chosen keys, and a typed value it cannot read as typed (for the service to name)', () => {
    const form = emptyAccommodationsForm();
    form.extra_time_minutes = ' 15 ';
    form.breaks_count = 'two';
    form.note = 'By decision';
    assert.deepEqual(accommodationsValue(form, ['extra_time_minutes', 'note']), {
      extra_time_minutes: 15,
      note: 'By decision',
    });
    assert.deepEqual(accommodationsValue(form, ['breaks']), { breaks: { count: 'two', minutes: 0 } });
  });

  it('finds a refused exemption by its place among the ticked checks', () => {
    const form = accommodationsToForm(FULL);
    const errors = {
      'accommodations.extra_time_minutes': 'must be less than or equal to 600',
      'accommodations.exemptions[1].reason': "can't be blank",
    };
    assert.equal(accommodationError(errors, form, 'extra_time_minutes'), 'must be less than or equal to 600');
    assert.equal(accommodationError(errors, form, 'exemptions.id_photo.reason'), "can't be blank");
    assert.equal(accommodationError(errors, form, 'exemptions.webcam.reason'), undefined);
    assert.equal(accommodationError(errors, form, 'exemptions.microphone.reason'), undefined);
  });

  it('reads a record without accommodations, or with none granted, as none', () => {
    assert.equal(accommodationsOf({}), null);
    assert.equal(accommodationsOf({ accommodations: null }), null);
    assert.equal(accommodationsOf({ accommodations: accommodationsValue(emptyAccommodationsForm()) }), null);
    assert.deepEqual(accommodationsOf({ accommodations: FULL }), FULL);
  });

  it('says the accommodations in short phrases', () => {
    assert.deepEqual(accommodationPhrases(FULL), [
      'extra time 50% + 10 min',
      '2 breaks of 10 min',
      'exempt from Webcam, ID card photo',
      'assistive technology',
      'staff note',
    ]);
    assert.deepEqual(accommodationPhrases({ ...FULL, extra_time_minutes: 0, breaks: null, exemptions: [] }), [
      'extra time 50%',
      'assistive technology',
      'staff note',
    ]);
  });

  it('words the readiness of a practice run and a running break', () => {
    assert.equal(practiceWords(practiceOf({})), 'Not tried');
    assert.match(
      practiceWords({ status: 'failed', failed_check: 'screen_share', at: '2026-11-27T14:05:00Z' }),
      /^Failed: Screen sharing \(Nov 27, 2026/,
    );
    assert.match(
      practiceWords({ status: 'passed', failed_check: null, at: '2026-11-27T14:05:00Z' }),
      /^Passed \(/,
    );
    assert.equal(breakWords(null), 'On break');
    assert.match(breakWords('2026-11-29T10:42:00Z'), /^On break, ends \d\d:42/);
  });

  it('pairs the rest-break incidents into spans on the video clock', () => {
    const incident = (id: number, type: string | null, offset: number) => ({
      id,
      type,
      comment: '',
      offset_time: offset,
      created_at: null,
      source: null,
    });
    const timed = timedIncidents(
      [
        incident(1, 'break_started', 600),
        incident(2, null, 650),
        incident(3, 'break_ended', 1200),
        incident(4, 'break_ended', 1300),
        incident(5, 'break_started', 2000),
      ],
      null,
    );
    assert.deepEqual(
      timed.map((item) => item.rest),
      ['started', undefined, 'ended', 'ended', 'started'],
    );
    assert.deepEqual(restSpans(timed), [
      { id: 1, start: 600, end: 1200 },
      { id: 5, start: 2000, end: null },
    ]);
  });
});
