/**
 * Automated flags as the console words them (web/console/src/lib/flags.ts): which incidents are flags,
 * their type in words, confidence, who dismissed them, the queue's score bands, and the review
 * timeline's incidents carrying their flag (web/console/src/lib/review-time.ts).
 */
import '../helpers/console-language.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  confidenceWords,
  dismisserWords,
  FLAG_TYPES,
  flagOf,
  flagTypeWords,
  suspicionBand,
  suspicionWords,
} from '../../web/console/src/lib/flags.ts';
import { timedIncidents } from '../../web/console/src/lib/review-time.ts';
import { FLAG_TYPES as SERVER_FLAG_TYPES } from '../../src/domain/flags/flag-types.ts';

describe('console flags', () => {
  it('knows every flag type the service knows, each in words', () => {
    assert.deepEqual([...FLAG_TYPES].sort(), [...SERVER_FLAG_TYPES].sort());
    for (const type of FLAG_TYPES) assert.doesNotMatch(flagTypeWords(type), /_/);
    assert.equal(flagTypeWords('multiple_faces'), 'Several faces in view');
    assert.match(flagTypeWords('face_mismatch'), /advisory/);
    assert.equal(flagTypeWords('a_new_kind'), 'a new kind');
  });

  it('reads an incident as a flag only when its source is automatic', () => {
    assert.equal(flagOf({ source: null, type: null }), undefined);
    assert.equal(flagOf({}), undefined);
    const flag = flagOf({
      source: 'automatic',
      type: 'no_face',
      confidence: 0.834,
      end_offset_time: 18,
      dismissed: false,
      dismissed_at: null,
      dismissed_by: null,
    });
    assert.deepEqual(flag, {
      type: 'no_face',
      words: 'No face in view',
      known: true,
      confidence: 0.834,
      end: 18,
      dismissed: false,
      dismissedAt: null,
      dismissedBy: null,
      informational: false,
    });
    assert.equal(
      flagOf({ source: 'automatic', type: 'looking_away', informational: true })?.informational,
      true,
    );
    const dismissed = flagOf({
      source: 'automatic',
      type: 'speech',
      dismissed: true,
      dismissed_at: '2027-01-01T10:00:00Z',
      dismissed_by: 4,
    });
    assert.equal(dismissed?.dismissed, true);
    assert.equal(dismissed?.dismissedBy, 4);
    assert.equal(flagOf({ source: 'automatic', type: 'later_kind' })?.known, false);
  });

  it('words confidence, the dismisser and the score', () => {
    assert.equal(confidenceWords(0.834), 'confidence 83%');
    assert.equal(confidenceWords(1.2), 'confidence 100%');
    assert.equal(confidenceWords(null), '');
    const names = new Map([[7, 'Rita Reviewer']]);
    assert.equal(dismisserWords(3, 3, names), 'you');
    assert.equal(dismisserWords(7, 3, names), 'Rita Reviewer');
    assert.equal(dismisserWords(9, 3, names), 'user 9');
    assert.equal(dismisserWords(null, 3, names), 'a reviewer');
    assert.deepEqual(
      [0, 5, 20, 49, 50, 100].map((score) => [suspicionWords(score), suspicionBand(score)]),
      [
        ['none', 'none'],
        ['low', 'low'],
        ['medium', 'medium'],
        ['medium', 'medium'],
        ['high', 'high'],
        ['high', 'high'],
      ],
    );
    assert.equal(suspicionWords(undefined), 'no flags');
    assert.equal(suspicionBand(null), 'none');
  });

  it('puts flags on the review clock with their flag, other incidents without', () => {
    const timed = timedIncidents(
      [
        {
          id: 2,
          comment: 'Automatic flag: no face',
          offset_time: 30,
          created_at: null,
          source: 'automatic',
          type: 'no_face',
          end_offset_time: 41,
        },
        { id: 1, comment: 'Looked away', offset_time: 10, created_at: null, source: null, type: null },
      ],
      null,
    );
    assert.deepEqual(
      timed.map((incident) => [incident.id, incident.at, incident.flag?.type, incident.flag?.end]),
      [
        [1, 10, undefined, undefined],
        [2, 30, 'no_face', 41],
      ],
    );
  });
});
