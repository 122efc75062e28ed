import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StateConflict } from '../../src/domain/errors.ts';
import {
  canMove,
  move,
  SESSION_STATUSES,
  type SessionStatus,
} from '../../src/domain/student-sessions/status.ts';

/** The rule written out independently of the table: forward only, plus the one step back. */
function expected(from: SessionStatus, to: SessionStatus): boolean {
  if (from === 'exam_not_started' && to === 'in_setup') return true;
  return SESSION_STATUSES.indexOf(to) > SESSION_STATUSES.indexOf(from);
}

describe('student session status machine', () => {
  for (const from of SESSION_STATUSES) {
    for (const to of SESSION_STATUSES) {
      if (expected(from, to)) {
        it(`allows ${from} → ${to}`, () => {
          assert.equal(canMove(from, to), true);
          assert.equal(move(from, to), to);
        });
      } else {
        it(`forbids ${from} → ${to} with a conflict naming both states`, () => {
          assert.equal(canMove(from, to), false);
          assert.throws(
            () => move(from, to),
            (error: unknown) =>
              error instanceof StateConflict &&
              error.code === 'state_conflict' &&
              error.message === `Cannot move a student session from ${from} to ${to}`,
          );
        });
      }
    }
  }

  it('lets nothing leave exam_finished', () => {
    for (const to of SESSION_STATUSES) assert.equal(canMove('exam_finished', to), false);
  });
});
