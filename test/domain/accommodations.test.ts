import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Invalid } from '../../src/domain/errors.ts';
import {
  type Accommodations,
  NO_ACCOMMODATIONS,
  parseStoredAccommodations,
  presentAccommodations,
  readAccommodations,
  storedAccommodations,
} from '../../src/domain/student-sessions/accommodations.ts';

const read = (value: unknown, current: Accommodations = NO_ACCOMMODATIONS) =>
  readAccommodations({ accommodations: value }, current);

function refusedOn(value: unknown, field: string): void {
  assert.throws(
    () => read(value),
    (error: unknown) => error instanceof Invalid && error.field === field,
    `${JSON.stringify(value)} is refused on ${field}`,
  );
}

describe('reading accommodations (accommodations.ts)', () => {
  it('is absent when the request has none', () => {
    assert.equal(readAccommodations({}, NO_ACCOMMODATIONS), undefined);
  });

  it('reads every key, exemptions in a fixed order', () => {
    const read1 = read({
      extra_time_minutes: 10,
      extra_time_percent: '50',
      breaks: { count: 2, minutes: 10 },
      exemptions: [
        { check: 'id_photo', reason: 'blind student' },
        { check: 'webcam', reason: 'no camera' },
      ],
      assistive_technology: 'true',
      note: 'Uses a screen reader',
    });
    assert.deepEqual(read1, {
      extraTimeMinutes: 10,
      extraTimePercent: 50,
      breaks: { count: 2, minutes: 10 },
      exemptions: [
        { check: 'webcam', reason: 'no camera' },
        { check: 'id_photo', reason: 'blind student' },
      ],
      assistiveTechnology: true,
      note: 'Uses a screen reader',
    });
  });

  it('reads JSON text (a form or a CSV cell) and form-style lists', () => {
    assert.equal(read('{"extra_time_minutes": 5}')?.extraTimeMinutes, 5);
    const fromForm = read({ exemptions: { 0: { check: 'fullscreen', reason: 'tremor' } } });
    assert.deepEqual(fromForm?.exemptions, [{ check: 'fullscreen', reason: 'tremor' }]);
  });

  it('keeps what an update leaves out, and clears everything on null', () => {
    const current = read({ extra_time_minutes: 10, breaks: { count: 1, minutes: 5 } }) ?? NO_ACCOMMODATIONS;
    const updated = read({ extra_time_percent: 25 }, current);
    assert.equal(updated?.extraTimeMinutes, 10);
    assert.equal(updated?.extraTimePercent, 25);
    assert.deepEqual(updated?.breaks, { count: 1, minutes: 5 });
    assert.equal(read(null, current), NO_ACCOMMODATIONS);
    assert.equal(read({ breaks: null }, current)?.breaks, null);
    assert.equal(read({ breaks: { count: 0 } }, current)?.breaks, null);
  });

  it('refuses values out of range or unknown, naming the field', () => {
    refusedOn({ extra_time_minutes: 601 }, 'accommodations.extra_time_minutes');
    refusedOn({ extra_time_minutes: -1 }, 'accommodations.extra_time_minutes');
    refusedOn({ extra_time_minutes: 2.5 }, 'accommodations.extra_time_minutes');
    refusedOn({ extra_time_percent: 301 }, 'accommodations.extra_time_percent');
    refusedOn({ breaks: { count: 1, minutes: 0 } }, 'accommodations.breaks.minutes');
    refusedOn({ breaks: { count: 21, minutes: 5 } }, 'accommodations.breaks.count');
    refusedOn({ breaks: { minutes: 5 } }, 'accommodations.breaks.count');
    refusedOn({ breaks: 'soon' }, 'accommodations.breaks');
    refusedOn({ exemptions: [{ check: 'eyes', reason: 'x' }] }, 'accommodations.exemptions[0].check');
    refusedOn({ exemptions: [{ check: 'webcam' }] }, 'accommodations.exemptions[0].reason');
    refusedOn({ exemptions: [{ check: 'webcam', reason: '  ' }] }, 'accommodations.exemptions[0].reason');
    refusedOn(
      {
        exemptions: [
          { check: 'webcam', reason: 'a' },
          { check: 'webcam', reason: 'b' },
        ],
      },
      'accommodations.exemptions[1].check',
    );
    refusedOn({ exemptions: 'webcam' }, 'accommodations.exemptions');
    refusedOn({ assistive_technology: 'maybe' }, 'accommodations.assistive_technology');
    refusedOn({ note: 'x'.repeat(2001) }, 'accommodations.note');
    refusedOn({ note: 'a\u0000b' }, 'accommodations.note');
    refusedOn({ extra_time: 10 }, 'accommodations.extra_time');
    refusedOn(42, 'accommodations');
    refusedOn([1], 'accommodations');
  });

  it('stores nothing for none, and reads back what it stored', () => {
    assert.equal(storedAccommodations(NO_ACCOMMODATIONS), null);
    const some = read({ extra_time_percent: 50, exemptions: [{ check: 'mobile', reason: 'no phone' }] });
    assert.ok(some);
    const text = storedAccommodations(some);
    assert.ok(text);
    assert.deepEqual(parseStoredAccommodations(text), some);
    assert.deepEqual(JSON.parse(text), presentAccommodations(some));
    assert.equal(parseStoredAccommodations('not json'), NO_ACCOMMODATIONS);
  });
});
