import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isClockPaused, pausedMillis, pausedSeconds } from '../../src/domain/live/live-clock.ts';
import { NO_ACCOMMODATIONS } from '../../src/domain/student-sessions/accommodations.ts';
import { admissionRequired, awaitingAdmission, deadlineOf } from '../../src/domain/room/room.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-06-01T09:00:00.000Z');

/** A started session of a 60-minute exam without an end time, its clock as given. */
function session(clock: { clockPausedAt?: number | null; clockPausedMs?: number } = {}) {
  return {
    startTime: START,
    useDuration: true,
    clockPausedAt: clock.clockPausedAt ?? null,
    clockPausedMs: clock.clockPausedMs ?? 0,
    accommodations: NO_ACCOMMODATIONS,
    breakStartedAt: null,
    breakMs: 0,
  };
}

const exam = {
  useDuration: true,
  durationMinutes: 60,
  startTime: null,
  endTime: null,
  extraTimeBeyondEnd: true,
};

describe('the candidate clock (live-clock.ts)', () => {
  it('has stood still for nothing while it never paused', () => {
    assert.equal(pausedMillis(session(), START + 10 * MINUTE), 0);
    assert.equal(isClockPaused(session()), false);
  });

  it('counts the pauses that ended and the running one', () => {
    const paused = session({ clockPausedAt: START + 20 * MINUTE, clockPausedMs: 90_000 });
    assert.equal(isClockPaused(paused), true);
    assert.equal(pausedMillis(paused, START + 20 * MINUTE), 90_000);
    assert.equal(pausedMillis(paused, START + 25 * MINUTE + 500), 90_000 + 5 * MINUTE + 500);
    assert.equal(pausedSeconds(paused, START + 25 * MINUTE + 500), 390);
  });

  it('never counts a running pause below zero (a clock behind the one that paused)', () => {
    const paused = session({ clockPausedAt: START + 20 * MINUTE, clockPausedMs: 1000 });
    assert.equal(pausedMillis(paused, START + 19 * MINUTE), 1000);
  });
});

describe('deadlineOf with pauses (room.ts)', () => {
  it('is start + duration for a clock never paused', () => {
    assert.equal(deadlineOf(session(), exam, START), START + 60 * MINUTE);
  });

  it('is null before the start and for an exam without any limit', () => {
    assert.equal(deadlineOf({ ...session(), startTime: null }, exam, START), null);
    assert.equal(
      deadlineOf(
        session({ clockPausedMs: MINUTE }),
        { ...exam, useDuration: false, durationMinutes: null, endTime: null },
        START,
      ),
      null,
    );
  });

  it('moves later by every pause that ended', () => {
    const resumed = session({ clockPausedMs: 3 * MINUTE + 250 });
    assert.equal(deadlineOf(resumed, exam, START + 30 * MINUTE), START + 63 * MINUTE + 250);
  });

  it('moves on with the time while the clock is paused, so a paused candidate never runs out', () => {
    const paused = session({ clockPausedAt: START + 50 * MINUTE, clockPausedMs: MINUTE });
    for (const minutes of [50, 61, 75, 600]) {
      const now = START + minutes * MINUTE;
      const deadline = deadlineOf(paused, exam, now);
      // Ten minutes were left when the clock stopped (one already given back): they stay ten.
      assert.equal(deadline, now + 10 * MINUTE + MINUTE);
      assert.ok(deadline !== null && deadline > now);
    }
  });

  it("moves the exam's end_time cap later too: the paused time is given back in full", () => {
    const capped = { ...exam, endTime: START + 30 * MINUTE };
    assert.equal(deadlineOf(session(), capped, START), START + 30 * MINUTE);
    assert.equal(deadlineOf(session({ clockPausedMs: 2 * MINUTE }), capped, START), START + 32 * MINUTE);
    const onlyEnd = { ...exam, useDuration: false, durationMinutes: null, endTime: START + 45 * MINUTE };
    assert.equal(deadlineOf(session({ clockPausedMs: 5 * MINUTE }), onlyEnd, START), START + 50 * MINUTE);
  });

  it('ignores the duration for a session that does not use it, still counting the pauses', () => {
    const noDuration = { ...session({ clockPausedMs: MINUTE }), useDuration: false };
    assert.equal(
      deadlineOf(noDuration, { ...exam, endTime: START + 90 * MINUTE }, START),
      START + 91 * MINUTE,
    );
  });
});

describe('admission after a live ID check (room.ts)', () => {
  const live = { type: 'live_proctoring', liveIdCheck: true } as const;

  it('is required only in a live_proctoring exam with live_id_check', () => {
    assert.equal(admissionRequired(live), true);
    assert.equal(admissionRequired({ ...live, liveIdCheck: false }), false);
    assert.equal(admissionRequired({ type: 'record_review', liveIdCheck: true }), false);
  });

  it('is awaited only in the setup', () => {
    assert.equal(awaitingAdmission({ status: 'in_setup' }, live), true);
    for (const status of ['registered', 'after_check_req', 'exam_not_started', 'exam_started'] as const) {
      assert.equal(awaitingAdmission({ status }, live), false, status);
    }
    assert.equal(awaitingAdmission({ status: 'in_setup' }, { ...live, liveIdCheck: false }), false);
  });
});
