import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildCandidateManifest,
  type CandidateDataContent,
  candidateSummary,
  finalVerdictOf,
  hashSecret,
  maskEmail,
  newCode,
  newDownloadKey,
  normaliseCode,
  staffViewKindOf,
} from '../../src/domain/candidate-data/candidate-data.ts';
import type { ReviewEntry } from '../../src/domain/reviews/review.ts';

const entry = (
  verdict: ReviewEntry['verdict'],
  secondReview: ReviewEntry['secondReview'],
  comment: string,
) => ({
  id: 1,
  studentSessionId: 1,
  verdict,
  comment,
  reviewerId: 2,
  reviewerName: 'Reviewer',
  secondReview,
  createdAt: 1_000,
});

describe('candidate data rules', () => {
  it('shows only a settled newest verdict', () => {
    assert.equal(finalVerdictOf([]), undefined);
    assert.equal(finalVerdictOf([entry('in_review', 'not_required', 'note')]), undefined);
    assert.equal(finalVerdictOf([entry('violation', 'pending', 'note')]), undefined);
    assert.equal(
      finalVerdictOf([entry('passed', 'not_required', 'ok'), entry('in_review', 'not_required', 'x')]),
      undefined,
    );
    assert.deepEqual(
      finalVerdictOf([entry('in_review', 'not_required', 'x'), entry('violation', 'confirmed', 'Seen')]),
      {
        verdict: 'violation',
        comment: 'Seen',
        decidedAt: 1_000,
      },
    );
  });

  it('makes 8-digit codes and 43-character keys, and stores neither as such', () => {
    for (let round = 0; round < 50; round += 1) assert.match(newCode(), /^\d{8}$/);
    assert.match(newDownloadKey(), /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(
      hashSecret('12345678', 1),
      hashSecret('12345678', 2),
      'a code hash is bound to its session',
    );
    assert.equal(normaliseCode(' 1234-5678 '), '12345678');
  });

  it('masks the address it names back', () => {
    assert.equal(maskEmail('ada@example.org'), 'a•••@example.org');
    assert.equal(maskEmail('nonsense'), '•••');
  });

  it('knows its audit actions', () => {
    assert.equal(staffViewKindOf('staff_viewed_photos'), 'photos');
    assert.equal(staffViewKindOf('PATCH /api/v3/exams/:id'), undefined);
  });

  it('builds the manifest and the summary with incident times from the start', () => {
    const content: CandidateDataContent = {
      session: {
        id: 5,
        examId: 2,
        examName: 'Exam',
        name: 'Ada',
        email: 'ada@example.org',
        status: 'exam_finished',
        startTime: Date.UTC(2026, 10, 21, 9),
        endTime: Date.UTC(2026, 10, 21, 10),
        endReason: 'finished',
        language: null,
        mediaPurgedAt: null,
      },
      files: [],
      incidents: [
        {
          comment: 'Left\nthe room',
          kind: null,
          type: null,
          source: null,
          offsetSeconds: 90,
          endOffsetSeconds: null,
          confidence: null,
          dismissed: false,
          informational: false,
          createdAt: 0,
        },
      ],
      verdict: undefined,
      appeal: undefined,
      purged: [
        {
          studentSessionId: 5,
          kind: 'id_photo',
          rule: 'final_verdict',
          days: null,
          purgedAt: Date.UTC(2026, 10, 22, 10),
          idCheck: { checkedBy: 3, checkedByName: 'Rita Reviewer', checkedAt: Date.UTC(2026, 10, 21, 10) },
        },
      ],
      views: [{ userId: 3, name: null, role: null, kind: 'report', at: Date.UTC(2026, 10, 22) }],
      generatedAt: Date.UTC(2026, 10, 23),
    };
    const manifest = buildCandidateManifest(content) as {
      incidents: { time: string }[];
      verdict: unknown;
      deleted_under_retention: unknown;
    };
    assert.equal(manifest.incidents[0]?.time, '2026-11-21T09:01:30.000Z');
    assert.equal(manifest.verdict, null);
    assert.deepEqual(manifest.deleted_under_retention, [
      { kind: 'id_photo', rule: 'final_verdict', deleted_at: '2026-11-22T10:00:00.000Z' },
    ]);
    assert.ok(!JSON.stringify(manifest).includes('Rita Reviewer'), 'no reviewer names');
    const summary = candidateSummary(content, (key) => key);
    assert.ok(summary.includes('2026-11-21T09:01:30.000Z  Left the room'), 'one line per incident');
    assert.ok(summary.includes('server.candidateData.summary.formerStaff'));
  });
});
