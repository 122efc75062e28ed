import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import { purgedKindsOf, retentionFor } from '../../../src/domain/retention/retention.service.ts';
import { DAY_MS } from '../../../src/domain/retention/retention.ts';
import { StorageMissing } from '../../../src/storage/storage.ts';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';

type Json = Record<string, unknown>;
type Member = Awaited<ReturnType<TestServer['user']>>;

const HOUR_MS = 60 * 60 * 1000;
const POLICIES = '/institutes/:id/retention_policies';
const HOLD = '/student_sessions/:id/legal_hold';
/** A fixed start, so every period below is counted from a known moment. */
const START = Date.parse('2026-03-02T08:00:00.000Z');

/** A session's stored files by kind. */
interface Media {
  readonly idCard: StoredFile;
  readonly face: StoredFile;
  readonly recording: StoredFile;
  readonly chunk: StoredFile;
  readonly upload: StoredFile;
}

for (const dialect of DIALECTS) {
  describe(`retention per kind [${dialect}]`, () => {
    const clock = new TestClock(START);
    let server: TestServer;
    let institute: number;
    let other: number;
    let admin: Member;
    let owner: Member;
    let reviewer: Member;
    let proctor: Member;
    let superuser: Member;
    let otherAdmin: Member;
    let exam: number;

    const actorOf = (member: Member, role: Actor['role']): Actor => ({
      id: member.id,
      instituteId: institute,
      role,
    });

    /** A session that ended at `endedAt`, with one file of each kind and two incidents. */
    async function endedSession(endedAt: number): Promise<{ id: number; media: Media }> {
      const { studentSessions, files } = server.app.services;
      const session = await studentSessions.create(actorOf(owner, 'teacher'), exam, {
        name: 'Candidate',
        email: `candidate-${crypto.randomUUID()}@example.org`,
      });
      const keep = (name: string, contentType: string) =>
        files.keepStream(Readable.from([Buffer.from(`${name} of ${session.id}`)]), {
          originalName: name,
          contentType,
          instituteId: institute,
        });
      const media: Media = {
        idCard: await keep('id.png', 'image/png'),
        face: await keep('face.png', 'image/png'),
        recording: await keep('webcam.webm', 'video/webm'),
        chunk: await keep('webcam-0.webm', 'video/webm'),
        upload: await keep('answers.pdf', 'application/pdf'),
      };
      const { db } = server.app.database;
      await db
        .insertInto('session_files')
        .values([
          {
            student_session_id: session.id,
            kind: 'recording',
            file_id: media.chunk.id,
            sequence: 0,
            created_at: START,
          },
          {
            student_session_id: session.id,
            kind: 'upload',
            file_id: media.upload.id,
            sequence: 0,
            created_at: START,
          },
        ])
        .execute();
      await db
        .insertInto('recordings')
        .values({
          student_session_id: session.id,
          source: 'webcam',
          status: 'completed',
          file_id: media.recording.id,
          storage_key: media.recording.storageKey,
          size: media.recording.size,
          created_at: START,
          updated_at: START,
        })
        .execute();
      await db
        .insertInto('incidents')
        .values(
          ['Candidate left the room with a phone', 'Second person visible'].map((comment, index) => ({
            student_session_id: session.id,
            comment,
            offset_time: 60 * (index + 1),
            kind: 'proctor',
            created_at: START,
            updated_at: START,
          })),
        )
        .execute();
      await db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          end_time: endedAt,
          id_card_file_id: media.idCard.id,
          id_card_file_name: 'id.png',
          id_card_content_type: 'image/png',
          id_card_file_size: media.idCard.size,
          face_photo_file_id: media.face.id,
          face_photo_file_name: 'face.png',
          face_photo_content_type: 'image/png',
          face_photo_file_size: media.face.size,
        })
        .where('id', '=', session.id)
        .execute();
      return { id: session.id, media };
    }

    /** Records a verdict at the clock's now, as the reviewer. */
    async function verdict(sessionId: number, value: string, secondReview = 'not_required'): Promise<void> {
      const { db } = server.app.database;
      const previous = await db
        .selectFrom('session_reviews')
        .select('id')
        .where('student_session_id', '=', sessionId)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      await db
        .insertInto('session_reviews')
        .values({
          student_session_id: sessionId,
          previous_review_id: previous?.id ?? 0,
          verdict: value,
          comment: null,
          reviewer_id: reviewer.id,
          reviewer_name: 'Rita Reviewer',
          second_review: secondReview,
          created_at: clock.now(),
        })
        .execute();
    }

    async function stored(file: StoredFile): Promise<boolean> {
      try {
        (await server.app.services.files.open(file)).destroy();
        return true;
      } catch (error) {
        if (error instanceof StorageMissing) return false;
        throw error;
      }
    }

    /** Which of the session's files still have their stored object, by kind. */
    async function kept(media: Media): Promise<string[]> {
      const names: string[] = [];
      for (const [name, file] of Object.entries(media) as [string, StoredFile][]) {
        if (await stored(file)) names.push(name);
      }
      return names;
    }

    async function logOf(sessionId: number): Promise<[string, number, number | null, string | null][]> {
      const rows = await server.app.database.db
        .selectFrom('session_purges')
        .select(['kind', 'files', 'retention_period', 'rule'])
        .where('student_session_id', '=', sessionId)
        .orderBy('id')
        .execute();
      return rows.map((row) => [row.kind, Number(row.files), row.retention_period, row.rule]);
    }

    async function comments(sessionId: number): Promise<string[]> {
      const rows = await server.app.database.db
        .selectFrom('incidents')
        .select('comment')
        .where('student_session_id', '=', sessionId)
        .orderBy('id')
        .execute();
      return rows.map((row) => row.comment);
    }

    async function sweepAt(at: number): Promise<void> {
      clock.current = at;
      const outcome = await server.app.services.retention.sweep();
      assert.equal(outcome.failed, 0);
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      institute = await server.institute();
      other = await server.institute();
      await server.app.database.db
        .updateTable('institutes')
        .set({ session_retention_period: 60 })
        .where('id', '=', institute)
        .execute();
      admin = await server.user(institute, 'administrator');
      owner = await server.user(institute, 'teacher');
      reviewer = await server.user(institute, 'reviewer');
      proctor = await server.user(institute, 'proctor');
      superuser = await server.user(institute, 'superuser');
      otherAdmin = await server.user(other, 'administrator');
      const created = await server.app.services.exams.create(actorOf(owner, 'teacher'), {
        name: `Retention per kind ${crypto.randomUUID()}`,
        type: 'record_review',
        duration_minutes: 60,
      });
      exam = created.id;
    });

    after(async () => {
      await server.close();
    });

    describe('GET and PUT /institutes/:id/retention_policies', () => {
      it('answers the defaults: the ID photo 30 days, every other kind the session period', async () => {
        const answer = await admin.client.v3('GET', POLICIES, { id: institute });
        assert.equal(answer.status, 200, answer.text);
        const policies = (answer.json as Json).retention_policies as Json[];
        assert.deepEqual(
          policies.map((policy) => [policy.kind, policy.days, policy.is_default, policy.rule]),
          [
            ['id_photo', 30, true, 'final_verdict_or_period'],
            ['face_photo', 60, true, 'period'],
            ['recording', 60, true, 'period'],
            ['upload', 60, true, 'period'],
            ['incident', 60, true, 'period'],
          ],
        );
        assert.deepEqual(policies[0], {
          kind: 'id_photo',
          days: 30,
          setting: null,
          is_default: true,
          default_days: 30,
          follows_session_period: false,
          after_final_verdict_hours: 24,
          rule: 'final_verdict_or_period',
        });
        assert.deepEqual(
          await retentionFor(server.app.database.db, institute),
          await server.app.services.retention.retentionFor(institute),
        );
      });

      it('saves the kinds sent, keeps the others, and audit-logs the request', async () => {
        const answer = await admin.client.v3('PUT', POLICIES, {
          id: institute,
          face_photo_days: 10,
          recording_days: '20',
          incident_days: 40,
          upload_days: '',
        });
        assert.equal(answer.status, 200, answer.text);
        const policies = (answer.json as Json).retention_policies as Json[];
        assert.deepEqual(
          policies.map((policy) => [policy.kind, policy.days, policy.setting, policy.follows_session_period]),
          [
            ['id_photo', 30, null, false],
            ['face_photo', 10, 10, false],
            ['recording', 20, 20, false],
            ['upload', 60, null, true],
            ['incident', 40, 40, false],
          ],
        );
        const shown = await superuser.client.v3('GET', POLICIES, { id: institute });
        assert.deepEqual((shown.json as Json).retention_policies, policies);
        const events = await server.app.database.db
          .selectFrom('audit_events')
          .select(['action', 'user_id'])
          .where('action', '=', 'PUT /api/v3/institutes/:id/retention_policies')
          .execute();
        assert.deepEqual(
          events.map((event) => event.user_id),
          [admin.id],
        );
      });

      it('answers 422 for nothing sent and for a period out of range or unreadable, changing nothing', async () => {
        const before = await admin.client.v3('GET', POLICIES, { id: institute });
        const none = await admin.client.v3('PUT', POLICIES, { id: institute });
        assert.equal(none.status, 422, none.text);
        assert.deepEqual(none.json, missing('id_photo_days'));
        for (const [field, value, detail] of [
          ['id_photo_days', 0, 'must be greater than or equal to 1'],
          ['upload_days', 36_501, 'must be less than or equal to 36500'],
          ['recording_days', 'a week', 'is not a number'],
          ['face_photo_days', 2.5, 'is not a number'],
        ] as const) {
          const answer = await admin.client.v3('PUT', POLICIES, {
            id: institute,
            incident_days: 5,
            [field]: value,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid(field, detail));
        }
        const after = await admin.client.v3('GET', POLICIES, { id: institute });
        assert.deepEqual(after.json, before.json);
      });

      it('refuses other members (403) and hides another institute (404)', async () => {
        for (const member of [owner, proctor, reviewer]) {
          for (const answer of [
            await member.client.v3('GET', POLICIES, { id: institute }),
            await member.client.v3('PUT', POLICIES, { id: institute, id_photo_days: 1 }),
          ]) {
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          }
        }
        for (const id of [institute, 987654321]) {
          const answer = await otherAdmin.client.v3('PUT', POLICIES, { id, id_photo_days: 1 });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', id));
        }
        const missingOne = await superuser.client.v3('GET', POLICIES, { id: 987654321 });
        assert.equal(missingOne.status, 404, missingOne.text);
        const policies = (await admin.client.v3('GET', POLICIES, { id: institute })).json as Json;
        assert.equal((policies.retention_policies as Json[])[0]?.days, 30);
      });

      it('refuses unsigned, wrongly signed, stale and replayed requests', async () => {
        const call = (options: Parameters<Member['client']['v3']>[3]) =>
          admin.client.v3('PUT', POLICIES, { id: institute, id_photo_days: 30 }, options);
        for (const answer of [
          await call({ unsigned: true }),
          await call({ signature: '0'.repeat(64) }),
          await call({ timestamp: clock.now() - 2 * DAY_MS }),
        ]) {
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        const nonce = String(Date.now());
        const timestamp = clock.now();
        assert.equal((await call({ nonce, timestamp })).status, 200);
        const replayed: HttpAnswer = await call({ nonce, timestamp });
        assert.equal(replayed.status, 403, replayed.text);
      });
    });

    describe('the sweep, kind by kind (face 10, recording 20, ID 30, incident 40, upload 60 days)', () => {
      let plain: { id: number; media: Media };
      let held: { id: number; media: Media };
      let judged: { id: number; media: Media };
      let pending: { id: number; media: Media };
      let lateVerdict: { id: number; media: Media };
      let appealed: { id: number; media: Media };

      before(async () => {
        clock.current = START;
        plain = await endedSession(START);
        held = await endedSession(START);
        judged = await endedSession(START);
        pending = await endedSession(START);
        lateVerdict = await endedSession(START);
        appealed = await endedSession(START);
        const hold = await admin.client.v3('PUT', HOLD, { id: held.id, hold: true, reason: 'Appeal' });
        assert.equal(hold.status, 200, hold.text);
        // A final verdict a day after the end; a violation waiting for its second review; a verdict
        // that comes so late that the review period ends first.
        clock.current = START + DAY_MS;
        await verdict(judged.id, 'passed');
        await verdict(pending.id, 'violation', 'pending');
        // A violation the candidate appealed at once: open until it is decided.
        await verdict(appealed.id, 'violation');
        const { db } = server.app.database;
        const appealedEntry = await db
          .selectFrom('session_reviews')
          .select('id')
          .where('student_session_id', '=', appealed.id)
          .executeTakeFirstOrThrow();
        await db
          .insertInto('appeals')
          .values({
            student_session_id: appealed.id,
            review_id: appealedEntry.id,
            statement: 'It was my sister.',
            status: 'open',
            submitted_at: clock.now(),
            decided_by: null,
            decided_by_name: null,
            decided_at: null,
            comment: null,
            decision_review_id: null,
          })
          .execute();
        clock.current = START + 29 * DAY_MS + 12 * HOUR_MS;
        await verdict(lateVerdict.id, 'suspicious');
      });

      it('keeps everything just before the ID photo is 24 hours past a final verdict', async () => {
        await sweepAt(START + DAY_MS + 23 * HOUR_MS);
        for (const session of [plain, held, judged, pending, lateVerdict]) {
          assert.equal((await kept(session.media)).length, 5, `session ${session.id}`);
          assert.deepEqual(await logOf(session.id), []);
        }
      });

      it('removes the ID photo 24 hours after the verdict is final, keeping who checked it', async () => {
        await sweepAt(START + 2 * DAY_MS + HOUR_MS);
        assert.deepEqual(await kept(judged.media), ['face', 'recording', 'chunk', 'upload']);
        assert.deepEqual(await logOf(judged.id), [['id_photo', 1, 30, 'final_verdict']]);
        const purged = await purgedKindsOf(server.app.database.db, judged.id);
        assert.deepEqual(purged, [
          {
            studentSessionId: judged.id,
            kind: 'id_photo',
            rule: 'final_verdict',
            days: 30,
            purgedAt: START + 2 * DAY_MS + HOUR_MS,
            idCheck: { checkedBy: reviewer.id, checkedByName: 'Rita Reviewer', checkedAt: START + DAY_MS },
          },
        ]);
        const hold = await admin.client.v3('GET', HOLD, { id: judged.id });
        const record = (hold.json as Json).legal_hold as Json;
        assert.deepEqual(record.purged_kinds, [
          {
            kind: 'id_photo',
            rule: 'final_verdict',
            days: 30,
            purged_at: new Date(START + 2 * DAY_MS + HOUR_MS).toISOString(),
            id_checked: true,
            id_checked_by: reviewer.id,
            id_checked_by_name: 'Rita Reviewer',
            id_checked_at: new Date(START + DAY_MS).toISOString(),
          },
        ]);
        // The review reads the same record: a reviewer may, an administrator of another institute may not.
        const forReview = await reviewer.client.v3('GET', '/student_sessions/:id/retention', {
          id: judged.id,
        });
        assert.equal(forReview.status, 200, forReview.text);
        assert.deepEqual((forReview.json as Json).purged_kinds, record.purged_kinds);
        const hidden = await otherAdmin.client.v3('GET', '/student_sessions/:id/retention', {
          id: judged.id,
        });
        assert.equal(hidden.status, 404, hidden.text);
        const session = await admin.client.v3('GET', '/student_sessions/:id', { id: judged.id });
        assert.equal(((session.json as Json).student as Json).id_card_file_name, null);
        assert.equal(((session.json as Json).student as Json).face_photo_file_name, 'face.png');
        const address = await admin.client.v3('GET', '/student_sessions/:id/id_card', { id: judged.id });
        assert.equal(address.status, 404, address.text);
        // A violation waiting for its second review is not final: its ID photo stays.
        assert.equal((await kept(pending.media)).length, 5);
      });

      it('removes the face photo after 10 days and the recordings after 20, not before', async () => {
        await sweepAt(START + 10 * DAY_MS - HOUR_MS);
        assert.ok((await kept(plain.media)).includes('face'));
        await sweepAt(START + 10 * DAY_MS + HOUR_MS);
        assert.deepEqual(await kept(plain.media), ['idCard', 'recording', 'chunk', 'upload']);
        await sweepAt(START + 20 * DAY_MS - HOUR_MS);
        assert.ok((await kept(plain.media)).includes('recording'));
        await sweepAt(START + 20 * DAY_MS + HOUR_MS);
        assert.deepEqual(await kept(plain.media), ['idCard', 'upload']);
        const recordings = await admin.client.v3('GET', '/student_sessions/:id/recordings', { id: plain.id });
        assert.equal(recordings.status, 200, recordings.text);
        assert.deepEqual((recordings.json as Json).recordings, []);
        const face = await admin.client.v3('GET', '/student_sessions/:id/face_photo', { id: plain.id });
        assert.equal(face.status, 404, face.text);
      });

      it('removes the ID photo after its 30-day review period when that comes before 24 hours after the verdict', async () => {
        await sweepAt(START + 30 * DAY_MS - HOUR_MS);
        assert.ok((await kept(plain.media)).includes('idCard'));
        assert.ok((await kept(lateVerdict.media)).includes('idCard'));
        await sweepAt(START + 30 * DAY_MS + HOUR_MS);
        for (const session of [plain, pending, lateVerdict]) {
          assert.ok(!(await kept(session.media)).includes('idCard'), `session ${session.id}`);
          assert.deepEqual(
            (await logOf(session.id)).find((entry) => entry[0] === 'id_photo'),
            ['id_photo', 1, 30, 'period'],
          );
        }
        const [plainMark] = await purgedKindsOf(server.app.database.db, plain.id);
        assert.equal(plainMark?.idCheck, null, 'never reviewed: no ID check to keep');
        const lateMark = (await purgedKindsOf(server.app.database.db, lateVerdict.id)).find(
          (mark) => mark.kind === 'id_photo',
        );
        assert.equal(lateMark?.idCheck?.checkedBy, reviewer.id, 'the verdict that checked it is kept');
      });

      it('erases incident details after 40 days, keeping the incidents to count', async () => {
        await sweepAt(START + 40 * DAY_MS - HOUR_MS);
        assert.equal((await comments(plain.id))[0], 'Candidate left the room with a phone');
        await sweepAt(START + 40 * DAY_MS + HOUR_MS);
        assert.deepEqual(await comments(plain.id), ['', '']);
        assert.deepEqual(
          (await logOf(plain.id)).find((entry) => entry[0] === 'incident'),
          ['incident', 2, 40, 'period'],
        );
      });

      it('removes uploads with the session period (60 days), and a legal hold keeps every kind', async () => {
        await sweepAt(START + 60 * DAY_MS - HOUR_MS);
        assert.deepEqual(await kept(plain.media), ['upload']);
        await sweepAt(START + 60 * DAY_MS + HOUR_MS);
        assert.deepEqual(await kept(plain.media), []);
        assert.deepEqual(
          (await logOf(plain.id)).map((entry) => entry[0]),
          ['face_photo', 'recording', 'recording_chunk', 'id_photo', 'incident', 'upload'],
        );
        assert.equal((await kept(held.media)).length, 5);
        assert.deepEqual(await logOf(held.id), []);
        assert.deepEqual(await comments(held.id), [
          'Candidate left the room with a phone',
          'Second person visible',
        ]);
        assert.deepEqual(await purgedKindsOf(server.app.database.db, held.id), []);
      });

      it('keeps every kind of a session whose appeal is open, and purges it once decided', async () => {
        await sweepAt(START + 60 * DAY_MS + 2 * HOUR_MS);
        assert.equal((await kept(appealed.media)).length, 5);
        assert.deepEqual(await logOf(appealed.id), []);
        await server.app.database.db
          .updateTable('appeals')
          .set({ status: 'upheld', decided_at: clock.now() })
          .where('student_session_id', '=', appealed.id)
          .execute();
        await sweepAt(START + 60 * DAY_MS + 3 * HOUR_MS);
        assert.deepEqual(await kept(appealed.media), []);
      });

      it('lists each kind purged in the purge log, filtered by kind and rule', async () => {
        const answer = await admin.client.v3('GET', '/purges', {
          filter: JSON.stringify({ rule: { eq: 'final_verdict' } }),
        });
        assert.equal(answer.status, 200, answer.text);
        const purges = (answer.json as Json).purges as Json[];
        // The appealed session's ID photo went by the same rule once its appeal was decided.
        assert.deepEqual(
          purges.map((entry) => [entry.student_session_id, entry.kind]),
          [
            [appealed.id, 'id_photo'],
            [judged.id, 'id_photo'],
          ],
        );
        const incidents = await admin.client.v3('GET', '/student_sessions/:id/purges', {
          id: plain.id,
          filter: JSON.stringify({ kind: { eq: 'incident' } }),
        });
        assert.deepEqual(
          ((incidents.json as Json).purges as Json[]).map((entry) => [entry.kind, entry.files, entry.bytes]),
          [['incident', 2, 0]],
        );
      });
    });
  });
}
