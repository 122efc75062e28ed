import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type Accommodations, NO_ACCOMMODATIONS } from '../../src/domain/student-sessions/accommodations.ts';
import {
  breakEndsAt,
  breakMillis,
  type ClockExam,
  type ClockSession,
  deadlineOf,
  extraTimeMillis,
  timeAllowedSeconds,
} from '../../src/domain/student-sessions/deadline.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-06-01T09:00:00.000Z');
const at = (minutes: number) => START + minutes * MINUTE;

/** A 30-minute exam without a window, using its duration, extra time allowed past its end. */
const EXAM: ClockExam = {
  useDuration: true,
  durationMinutes: 30,
  startTime: null,
  endTime: null,
  extraTimeBeyondEnd: true,
};

function session(
  changes: Partial<Omit<ClockSession, 'accommodations'>> & { accommodations?: Partial<Accommodations> } = {},
): ClockSession {
  return {
    startTime: START,
    useDuration: true,
    clockPausedAt: null,
    clockPausedMs: 0,
    breakStartedAt: null,
    breakMs: 0,
    ...changes,
    accommodations: { ...NO_ACCOMMODATIONS, ...changes.accommodations },
  };
}

interface Case {
  readonly name: string;
  readonly session: ClockSession;
  readonly exam?: Partial<ClockExam>;
  /** Minutes after START at which the deadline is asked. */
  readonly now: number;
  /** Minutes after START, or null for no deadline. */
  readonly deadline: number | null;
}

const CASES: readonly Case[] = [
  { name: 'no accommodation: the duration', session: session(), now: 0, deadline: 30 },
  { name: 'not started: none', session: session({ startTime: null }), now: 0, deadline: null },
  {
    name: 'ten extra minutes',
    session: session({ accommodations: { extraTimeMinutes: 10 } }),
    now: 0,
    deadline: 40,
  },
  {
    name: 'fifty percent',
    session: session({ accommodations: { extraTimePercent: 50 } }),
    now: 0,
    deadline: 45,
  },
  {
    name: 'percent of the duration first, then minutes',
    session: session({ accommodations: { extraTimePercent: 100, extraTimeMinutes: 5 } }),
    now: 0,
    deadline: 65,
  },
  {
    name: 'a break that ended moves it by its length',
    session: session({
      accommodations: { extraTimePercent: 50, breaks: { count: 1, minutes: 10 } },
      breakMs: 10 * MINUTE,
    }),
    now: 20,
    deadline: 55,
  },
  {
    name: 'a running break moves it with the time',
    session: session({ accommodations: { breaks: { count: 2, minutes: 10 } }, breakStartedAt: at(10) }),
    now: 14,
    deadline: 34,
  },
  {
    name: 'a running break counts at most its allowance',
    session: session({ accommodations: { breaks: { count: 2, minutes: 10 } }, breakStartedAt: at(10) }),
    now: 25,
    deadline: 40,
  },
  {
    name: "a proctor's pause that ended",
    session: session({ clockPausedMs: 3 * MINUTE }),
    now: 10,
    deadline: 33,
  },
  {
    name: "a proctor's running pause and a break that ended add up",
    session: session({
      clockPausedAt: at(20),
      clockPausedMs: MINUTE,
      breakMs: 5 * MINUTE,
      accommodations: { breaks: { count: 1, minutes: 5 } },
    }),
    now: 22,
    deadline: 38,
  },
  {
    name: "the window's end caps the duration",
    session: session(),
    exam: { endTime: at(20) },
    now: 0,
    deadline: 20,
  },
  {
    name: 'extra time runs past the end when the exam allows it',
    session: session({ accommodations: { extraTimeMinutes: 10 } }),
    exam: { endTime: at(20) },
    now: 0,
    deadline: 30,
  },
  {
    name: 'extra time stops at the end when the exam does not allow it',
    session: session({ accommodations: { extraTimeMinutes: 10 } }),
    exam: { endTime: at(20), extraTimeBeyondEnd: false },
    now: 0,
    deadline: 20,
  },
  {
    name: 'without a duration: the end, extra time a percent of the window',
    session: session({ accommodations: { extraTimePercent: 25 } }),
    exam: { useDuration: false, durationMinutes: null, startTime: at(-20), endTime: at(60) },
    now: 0,
    deadline: 80,
  },
  {
    name: 'a session not using the duration: the end alone, plus its extra minutes',
    session: session({ useDuration: false, accommodations: { extraTimeMinutes: 15 } }),
    exam: { endTime: at(45) },
    now: 0,
    deadline: 60,
  },
  {
    name: 'neither a duration nor an end: none, whatever the extra time',
    session: session({ accommodations: { extraTimeMinutes: 15 } }),
    exam: { useDuration: false, durationMinutes: null },
    now: 0,
    deadline: null,
  },
];

describe('the one clock (deadline.ts deadlineOf)', () => {
  for (const testCase of CASES) {
    it(testCase.name, () => {
      const exam = { ...EXAM, ...testCase.exam };
      const expected = testCase.deadline === null ? null : at(testCase.deadline);
      assert.equal(deadlineOf(testCase.session, exam, at(testCase.now)), expected);
    });
  }

  it('runs 55 minutes of wall clock for 50% extra time and one full 10-minute break on a 30-minute exam', () => {
    const rested = session({
      accommodations: { extraTimePercent: 50, breaks: { count: 1, minutes: 10 } },
      breakStartedAt: at(12),
    });
    // While the break runs the deadline moves with the time, then holds once the allowance is spent.
    assert.equal(deadlineOf(rested, EXAM, at(12)), at(45));
    assert.equal(deadlineOf(rested, EXAM, at(17)), at(50));
    assert.equal(deadlineOf(rested, EXAM, at(22)), at(55));
    assert.equal(deadlineOf(rested, EXAM, at(40)), at(55));
    assert.equal(breakEndsAt(rested), at(22));
  });
});

describe('the parts of the clock', () => {
  it('rounds percent extra time to the millisecond', () => {
    assert.equal(
      extraTimeMillis(session({ accommodations: { extraTimePercent: 33 } }), { ...EXAM, durationMinutes: 7 }),
      138_600,
    );
  });

  it('gives time_allowed_seconds only where a duration applies', () => {
    assert.equal(timeAllowedSeconds(session({ accommodations: { extraTimeMinutes: 10 } }), EXAM), 40 * 60);
    assert.equal(timeAllowedSeconds(session({ useDuration: false }), EXAM), null);
  });

  it('never counts a running break below zero, and without an allowance up to now', () => {
    const early = session({ accommodations: { breaks: { count: 1, minutes: 10 } }, breakStartedAt: at(10) });
    assert.equal(breakMillis(early, at(9)), 0);
    const withdrawn = session({ breakStartedAt: at(10), breakMs: MINUTE });
    assert.equal(breakMillis(withdrawn, at(40)), 31 * MINUTE);
    assert.equal(breakEndsAt(withdrawn), null);
  });
});
