/**
 * The proctor wall's rules (web/console/src/lib/live-wall.ts): whose candidates a user sees and in what
 * order, the grid's pages and remembered page size, connection quality from the live client's
 * figures, new incidents, chat messages merged from two sources, and the exam-clock second of an
 * incident filed live.
 */
import '../helpers/console-language.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clampPage,
  columnsOf,
  liveOffset,
  liveStatusOf,
  mergeMessages,
  messageProblem,
  newIncidents,
  PAGE_SIZE_KEY,
  pageCountOf,
  pageOf,
  qualityOf,
  readPageSize,
  readSeen,
  savePageSize,
  saveSeen,
  seenKey,
  seesEveryCandidate,
  wallCandidates,
  type WallMessage,
  type WallStorage,
} from '../../web/console/src/lib/live-wall.ts';

/** A localStorage stand-in; `refuse` makes every write throw, as a full or private storage does. */
function memoryStorage(refuse = false): WallStorage & { readonly items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => {
      if (refuse) throw new Error('QuotaExceededError');
      items.set(key, value);
    },
  };
}

describe('the wall page size', () => {
  it('starts at 9 and remembers the choice', () => {
    const storage = memoryStorage();
    assert.equal(readPageSize(storage), 9);
    savePageSize(storage, 16);
    assert.equal(storage.items.get(PAGE_SIZE_KEY), '16');
    assert.equal(readPageSize(storage), 16);
  });

  it('ignores a kept value it does not offer, a missing storage and a refused write', () => {
    const storage = memoryStorage();
    storage.items.set(PAGE_SIZE_KEY, '12');
    assert.equal(readPageSize(storage), 9);
    assert.equal(readPageSize(undefined), 9);
    assert.doesNotThrow(() => savePageSize(memoryStorage(true), 4));
  });

  it('lays each size out as a square', () => {
    assert.deepEqual(
      ([4, 9, 16, 25] as const).map((size) => columnsOf(size)),
      [2, 3, 4, 5],
    );
  });
});

describe('the wall pages', () => {
  const items = Array.from({ length: 11 }, (_, index) => index + 1);

  it('counts pages, at least one', () => {
    assert.equal(pageCountOf(0, 9), 1);
    assert.equal(pageCountOf(9, 9), 1);
    assert.equal(pageCountOf(10, 9), 2);
  });

  it('slices a page, and shows the last page left when the asked one emptied', () => {
    assert.deepEqual(pageOf(items, 1, 4), [1, 2, 3, 4]);
    assert.deepEqual(pageOf(items, 3, 4), [9, 10, 11]);
    assert.deepEqual(pageOf(items, 7, 4), [9, 10, 11]);
    assert.equal(clampPage(0, 11, 4), 1);
    assert.equal(clampPage(7, 11, 4), 3);
    assert.deepEqual(pageOf([], 2, 4), []);
  });
});

describe('whose candidates the wall shows', () => {
  const exam = { user_id: 10, comanager_ids: [11] };

  it('shows every candidate to administrators and to teachers who manage the exam', () => {
    assert.equal(seesEveryCandidate('administrator', 99, exam), true);
    assert.equal(seesEveryCandidate('superuser', 99, exam), true);
    assert.equal(seesEveryCandidate('teacher', 10, exam), true);
    assert.equal(seesEveryCandidate('teacher', 11, exam), true);
  });

  it('shows only the assigned ones to proctors and to other teachers', () => {
    assert.equal(seesEveryCandidate('teacher', 12, exam), false);
    assert.equal(seesEveryCandidate('proctor', 10, exam), false);
    assert.equal(seesEveryCandidate('global_proctor', 10, exam), false);
  });

  const sessions = [
    { id: 4, name: 'Cleo', status: 'exam_started', proctor_id: 7 },
    { id: 2, name: 'Ada', status: 'in_setup', proctor_id: 8 },
    { id: 3, name: 'Bob', status: 'exam_finished', proctor_id: 7 },
    { id: 1, name: 'Ada', status: 'exam_started', proctor_id: 7 },
  ];

  it('keeps a stable order: by name, then id', () => {
    const all = wallCandidates(sessions, { userId: 7, onlyMine: false, hideFinished: false });
    assert.deepEqual(
      all.map((session) => session.id),
      [1, 2, 3, 4],
    );
  });

  it('narrows to the user’s sessions and leaves finished ones out when asked', () => {
    const mine = wallCandidates(sessions, { userId: 7, onlyMine: true, hideFinished: true });
    assert.deepEqual(
      mine.map((session) => session.id),
      [1, 4],
    );
  });
});

describe('connection quality', () => {
  it('is good, fair or poor from the frame rate, loss and round trip, with the frame rate in words', () => {
    assert.deepEqual(qualityOf({ fps: 15.2, lossPercent: 0, rttMs: 40 }), {
      level: 'good',
      words: 'good (15 fps)',
    });
    assert.deepEqual(qualityOf({ fps: 8, lossPercent: null, rttMs: null }), {
      level: 'fair',
      words: 'fair (8 fps)',
    });
    assert.equal(qualityOf({ fps: 15, lossPercent: 3, rttMs: 40 }).level, 'fair');
    assert.equal(qualityOf({ fps: 15, lossPercent: 3, rttMs: 40 }).words, 'fair (15 fps, 3% lost)');
    assert.equal(qualityOf({ fps: 15, lossPercent: 0, rttMs: 500 }).level, 'fair');
    assert.equal(qualityOf({ fps: 3, lossPercent: 0, rttMs: 40 }).level, 'poor');
    assert.equal(qualityOf({ fps: 15, lossPercent: 12, rttMs: 40 }).level, 'poor');
  });

  it('is unknown before a frame rate is measured', () => {
    assert.deepEqual(qualityOf({ fps: null, lossPercent: null, rttMs: null }), {
      level: 'unknown',
      words: 'not measured yet',
    });
  });
});

describe('live status', () => {
  it('reads the three statuses and takes anything else as offline', () => {
    assert.equal(liveStatusOf('live'), 'live');
    assert.equal(liveStatusOf('connecting'), 'connecting');
    assert.equal(liveStatusOf('offline'), 'offline');
    assert.equal(liveStatusOf(undefined), 'offline');
    assert.equal(liveStatusOf('gone'), 'offline');
  });
});

describe('new incidents', () => {
  it('counts those since the tile was last opened, every one before it ever was', () => {
    assert.equal(newIncidents(3, undefined), 3);
    assert.equal(newIncidents(3, 1), 2);
    assert.equal(newIncidents(3, 3), 0);
    assert.equal(newIncidents(1, 3), 0);
  });

  it('keeps the seen counts per exam and reads only sound entries back', () => {
    const storage = memoryStorage();
    saveSeen(
      storage,
      7,
      new Map([
        [1, 2],
        [5, 0],
      ]),
    );
    assert.deepEqual(
      [...readSeen(storage, 7)],
      [
        [1, 2],
        [5, 0],
      ],
    );
    assert.equal(readSeen(storage, 8).size, 0);
    storage.items.set(seenKey(9), '{"1":2,"x":3,"4":-1,"5":"2","6":1.5}');
    assert.deepEqual([...readSeen(storage, 9)], [[1, 2]]);
    storage.items.set(seenKey(9), 'not json');
    assert.equal(readSeen(storage, 9).size, 0);
    storage.items.set(seenKey(9), '[1,2]');
    assert.equal(readSeen(storage, 9).size, 0);
  });
});

describe('the exam clock of a live incident', () => {
  const start = '2026-05-04T09:00:00.000Z';
  const at = (iso: string) => Date.parse(iso);

  it('is whole seconds since the session started, rounded down', () => {
    assert.equal(liveOffset(start, at('2026-05-04T09:05:12.900Z')), 312);
  });

  it('is 0 before the start, without a start or for a time it cannot read', () => {
    assert.equal(liveOffset(start, at('2026-05-04T08:59:00.000Z')), 0);
    assert.equal(liveOffset(null, Date.now()), 0);
    assert.equal(liveOffset('yesterday-ish', Date.now()), 0);
  });
});

describe('chat messages', () => {
  const message = (id: number, sender: 'proctor' | 'candidate', body: string): WallMessage => ({
    id,
    student_session_id: 1,
    sender,
    author: sender === 'proctor' ? 'Pat Proctor' : null,
    body,
    created_at: '2026-05-04T09:00:00.000Z',
  });

  it('merges the history and the arrivals, each message once, oldest first', () => {
    const merged = mergeMessages(
      [message(1, 'proctor', 'Hello'), message(3, 'candidate', 'Hi')],
      [message(3, 'candidate', 'Hi'), message(2, 'candidate', 'Early'), message(4, 'proctor', 'Fine')],
    );
    assert.deepEqual(
      merged.map((item) => item.id),
      [1, 2, 3, 4],
    );
  });

  it('refuses an empty message and one over 2000 characters before sending', () => {
    assert.equal(messageProblem('   '), 'Write a message first.');
    assert.equal(messageProblem('x'.repeat(2001)), 'A message holds at most 2000 characters.');
    assert.equal(messageProblem(` ${'x'.repeat(2000)} `), undefined);
  });
});
