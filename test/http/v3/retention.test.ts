import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Actor } from '../../../src/domain/access.ts';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import { createRetentionService } from '../../../src/domain/retention/retention.service.ts';
import { DAY_MS, SESSION_RETENTION_JOB } from '../../../src/domain/retention/retention.ts';
import { createWorker } from '../../../src/jobs/worker.ts';
import { createStorage } from '../../../src/storage/index.ts';
import { type Storage, StorageMissing } from '../../../src/storage/storage.ts';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

type Json = Record<string, unknown>;
type Member = Awaited<ReturnType<TestServer['user']>>;

const HOLD = '/student_sessions/:id/legal_hold';
const SESSION_PURGES = '/student_sessions/:id/purges';

function recordOf(answer: HttpAnswer, key: string): Json {
  assert.equal(answer.status, 200, answer.text);
  return (answer.json as Json)[key] as Json;
}

function listOf(answer: HttpAnswer, key: string): Json[] {
  assert.equal(answer.status, 200, answer.text);
  return (answer.json as Json)[key] as Json[];
}

/** The files a session was given: every stored object, by what it is. */
interface SessionMedia {
  readonly all: readonly StoredFile[];
}

for (const dialect of DIALECTS) {
  describe(`session retention [${dialect}]`, () => {
    let server: TestServer;
    let institute: number;
    let keepForever: number;
    let admin: Member;
    let owner: Member;
    let proctor: Member;
    let superuser: Member;
    let otherAdmin: Member;
    let exam: number;
    let foreverExam: number;

    const actorOf = (member: Member, instituteId: number, role: Actor['role']): Actor => ({
      id: member.id,
      instituteId,
      role,
    });

    async function newExam(member: Member, instituteId: number): Promise<number> {
      const created = await server.app.services.exams.create(actorOf(member, instituteId, 'teacher'), {
        name: `Retention ${crypto.randomUUID()}`,
        type: 'record_review',
        duration_minutes: 60,
      });
      return created.id;
    }

    /** A session of `examId` that ended `daysAgo` days ago (null: never ended), with every kind of media. */
    async function sessionWithMedia(
      examId: number,
      instituteId: number,
      member: Member,
      daysAgo: number | null,
    ): Promise<{ id: number; media: SessionMedia }> {
      const { studentSessions, files } = server.app.services;
      const session = await studentSessions.create(actorOf(member, instituteId, 'teacher'), examId, {
        name: 'Candidate',
        email: `candidate-${crypto.randomUUID()}@example.org`,
      });
      const keep = (name: string, contentType: string) =>
        files.keepStream(Readable.from([Buffer.from(`${name} of ${session.id} ${crypto.randomUUID()}`)]), {
          originalName: name,
          contentType,
          instituteId,
        });
      const webcamChunk = await keep('webcam-0.webm', 'video/webm');
      const screenChunk = await keep('screen-0.webm', 'video/webm');
      const upload = await keep('answers.pdf', 'application/pdf');
      const idCard = await keep('id.png', 'image/png');
      const face = await keep('face.png', 'image/png');
      const examDocument = await keep('exam.pdf', 'application/pdf');
      const recording = await keep('webcam.webm', 'video/webm');
      const { db } = server.app.database;
      const now = Date.now();
      await db
        .insertInto('session_files')
        .values([
          {
            student_session_id: session.id,
            kind: 'recording',
            file_id: webcamChunk.id,
            sequence: 0,
            created_at: now,
          },
          {
            student_session_id: session.id,
            kind: 'screen_recording',
            file_id: screenChunk.id,
            sequence: 0,
            created_at: now,
          },
          {
            student_session_id: session.id,
            kind: 'upload',
            file_id: upload.id,
            sequence: 0,
            created_at: now,
          },
        ])
        .execute();
      await db
        .insertInto('recordings')
        .values({
          student_session_id: session.id,
          source: 'webcam',
          status: 'completed',
          file_id: recording.id,
          storage_key: recording.storageKey,
          size: recording.size,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await db
        .updateTable('student_sessions')
        .set({
          status: daysAgo === null ? 'exam_started' : 'exam_finished',
          end_time: daysAgo === null ? null : now - daysAgo * DAY_MS,
          id_card_file_id: idCard.id,
          id_card_file_name: 'id.png',
          id_card_content_type: 'image/png',
          id_card_file_size: idCard.size,
          face_photo_file_id: face.id,
          face_photo_file_name: 'face.png',
          face_photo_content_type: 'image/png',
          face_photo_file_size: face.size,
          exam_document_file_id: examDocument.id,
          exam_document_content_type: 'application/pdf',
          exam_document_file_size: examDocument.size,
        })
        .where('id', '=', session.id)
        .execute();
      return {
        id: session.id,
        media: { all: [webcamChunk, screenChunk, upload, idCard, face, examDocument, recording] },
      };
    }

    /** How many of the files still have their stored object. */
    async function storedCount(media: SessionMedia): Promise<number> {
      let count = 0;
      for (const file of media.all) {
        try {
          const stream = await server.app.services.files.open(file);
          stream.destroy();
          count += 1;
        } catch (error) {
          if (!(error instanceof StorageMissing)) throw error;
        }
      }
      return count;
    }

    /** How many rows still name the session's media: files, session files, recordings. */
    async function rowCount(sessionId: number, media: SessionMedia): Promise<number> {
      const { db } = server.app.database;
      const ids = media.all.map((file) => file.id);
      const files = await db.selectFrom('files').select('id').where('id', 'in', ids).execute();
      const sessionFiles = await db
        .selectFrom('session_files')
        .select('id')
        .where('student_session_id', '=', sessionId)
        .execute();
      const recordings = await db
        .selectFrom('recordings')
        .select('id')
        .where('student_session_id', '=', sessionId)
        .execute();
      return files.length + sessionFiles.length + recordings.length;
    }

    async function purgeLog(sessionId: number) {
      return server.app.database.db
        .selectFrom('session_purges')
        .selectAll()
        .where('student_session_id', '=', sessionId)
        .orderBy('kind')
        .execute();
    }

    before(async () => {
      server = await startTestServer(dialect);
      institute = await server.institute();
      keepForever = await server.institute();
      await server.app.database.db
        .updateTable('institutes')
        .set({ session_retention_period: 30 })
        .where('id', '=', institute)
        .execute();
      admin = await server.user(institute, 'administrator');
      owner = await server.user(institute, 'teacher');
      proctor = await server.user(institute, 'proctor');
      superuser = await server.user(institute, 'superuser');
      otherAdmin = await server.user(keepForever, 'administrator');
      exam = await newExam(owner, institute);
      foreverExam = await newExam(otherAdmin, keepForever);
    });

    after(async () => {
      await server.close();
    });

    describe('the sweep', () => {
      let expired: { id: number; media: SessionMedia };
      let recent: { id: number; media: SessionMedia };
      let held: { id: number; media: SessionMedia };
      let unended: { id: number; media: SessionMedia };
      let noPeriod: { id: number; media: SessionMedia };

      before(async () => {
        expired = await sessionWithMedia(exam, institute, owner, 31);
        recent = await sessionWithMedia(exam, institute, owner, 29);
        held = await sessionWithMedia(exam, institute, owner, 45);
        unended = await sessionWithMedia(exam, institute, owner, null);
        noPeriod = await sessionWithMedia(foreverExam, keepForever, otherAdmin, 4000);
        const hold = await admin.client.v3('PUT', HOLD, { id: held.id, hold: true, reason: 'Case 2024-17' });
        assert.equal(recordOf(hold, 'legal_hold').held, true);
      });

      it('purges the files of a session ended longer ago than the period, and logs what went', async () => {
        const outcome = await server.app.services.retention.sweep();
        assert.equal(outcome.failed, 0);
        assert.ok(outcome.sessions >= 1);
        assert.equal(await storedCount(expired.media), 0, 'every stored object is gone');
        assert.equal(await rowCount(expired.id, expired.media), 0, 'no row names a purged file');

        const session = recordOf(
          await admin.client.v3('GET', '/student_sessions/:id', { id: expired.id }),
          'student',
        );
        assert.equal(session.id, expired.id, 'the session itself stays');
        assert.equal(session.id_card_file_name, null);
        assert.equal(session.face_photo_file_size, null);
        assert.equal(session.exam_document_file_size, null);

        const log = await purgeLog(expired.id);
        assert.deepEqual(
          log.map((entry) => [entry.kind, Number(entry.files), entry.reason, entry.retention_period]),
          [
            ['face_photo', 1, 'retention', 30],
            ['id_photo', 1, 'retention', 30],
            ['recording', 1, 'retention', 30],
            ['recording_chunk', 2, 'retention', 30],
            ['upload', 2, 'retention', 30],
          ],
        );
        const bytes = log.reduce((sum, entry) => sum + Number(entry.bytes), 0);
        assert.equal(
          bytes,
          expired.media.all.reduce((sum, file) => sum + file.size, 0),
        );

        const hold = recordOf(await admin.client.v3('GET', HOLD, { id: expired.id }), 'legal_hold');
        assert.equal(hold.held, false);
        assert.equal(typeof hold.media_purged_at, 'string');
        assert.deepEqual(
          (hold.purged_kinds as Json[]).map((entry) => [entry.kind, entry.rule, entry.days]),
          [
            ['id_photo', 'period', 30],
            ['face_photo', 'period', 30],
            ['recording', 'period', 30],
            ['upload', 'period', 30],
            ['incident', 'period', 30],
          ],
        );
      });

      it('keeps a recent session, a held one, an unended one and one of an institute without a period', async () => {
        for (const kept of [recent, held, unended]) {
          assert.equal(
            await storedCount(kept.media),
            kept.media.all.length,
            `session ${kept.id} keeps its objects`,
          );
          assert.equal(await rowCount(kept.id, kept.media), 7 + 3 + 1, `session ${kept.id} keeps its rows`);
          assert.deepEqual(await purgeLog(kept.id), []);
        }
        // Without a session period only the ID photo goes, after its default review period of 30 days.
        assert.equal(await storedCount(noPeriod.media), noPeriod.media.all.length - 1);
        assert.deepEqual(
          (await purgeLog(noPeriod.id)).map((entry) => [entry.kind, entry.retention_period]),
          [['id_photo', 30]],
        );
      });

      it('is idempotent: a second sweep purges nothing and logs nothing more', async () => {
        const outcome = await server.app.services.retention.sweep();
        assert.equal(outcome.sessions, 0);
        assert.equal((await purgeLog(expired.id)).length, 5);
      });

      it('purges a held session once its hold is cleared', async () => {
        const cleared = await admin.client.v3('PUT', HOLD, {
          id: held.id,
          hold: false,
          reason: 'Case closed',
        });
        assert.equal(recordOf(cleared, 'legal_hold').held, false);
        await server.app.services.retention.sweep();
        assert.equal(await storedCount(held.media), 0);
        assert.equal((await purgeLog(held.id)).length, 5);
      });

      it('completes after a sweep that failed half-way through a session (a storage outage, a crash)', async () => {
        const first = await sessionWithMedia(exam, institute, owner, 60);
        const second = await sessionWithMedia(exam, institute, owner, 61);
        const real = await createStorage(server.app.config);
        let deletes = 0;
        // Fails the third deletion of the sweep: the first session ends half purged.
        const failing: Storage = {
          ...real,
          async delete(key) {
            deletes += 1;
            if (deletes === 3) throw new Error('storage went away');
            await real.delete(key);
          },
        };
        const crashing = createRetentionService({
          db: server.app.database.db,
          clock: { now: () => Date.now() },
          storage: failing,
          logger: pino({ level: 'silent' }),
        });
        const broken = await crashing.sweep({ batchSize: 1 });
        assert.equal(broken.failed, 1);
        // Kind by kind, the longest-ended first: both ID photos go, then the face photo of the
        // longest-ended fails (the third deletion); the other session is purged after it.
        const failedSession = second;
        const left = await storedCount(failedSession.media);
        assert.equal(left, failedSession.media.all.length - 1, 'only its ID photo went');
        assert.equal(await storedCount(first.media), 0);
        // The kind that failed keeps its rows (so the next sweep knows what is left) and no log.
        assert.equal(await rowCount(failedSession.id, failedSession.media), 6 + 3 + 1);
        assert.deepEqual(
          (await purgeLog(failedSession.id)).map((entry) => entry.kind),
          ['id_photo'],
        );

        const outcome = await server.app.services.retention.sweep({ batchSize: 1 });
        assert.equal(outcome.failed, 0);
        for (const session of [first, second]) {
          assert.equal(await storedCount(session.media), 0);
          assert.equal(await rowCount(session.id, session.media), 0);
          assert.equal((await purgeLog(session.id)).length, 5, 'logged once');
        }
      });

      it('stops between sessions when aborted, and the next sweep carries on', async () => {
        const sessions = [
          await sessionWithMedia(exam, institute, owner, 70),
          await sessionWithMedia(exam, institute, owner, 71),
        ];
        const stop = new AbortController();
        const partial = await server.app.services.retention.sweep({
          signal: stop.signal,
          progress: () => {
            stop.abort();
            return Promise.resolve();
          },
        });
        assert.equal(partial.sessions, 1);
        const job = await server.app.services.jobs.enqueue(server.app.database.db, {
          kind: SESSION_RETENTION_JOB,
          payload: {},
        });
        const worker = createWorker({
          db: server.app.database.db,
          dialect: server.app.database.dialect,
          clock: server.app.clock,
          logger: pino({ level: 'silent' }),
          handlers: server.app.jobHandlers,
        });
        assert.equal(await worker.runOnce(), true);
        assert.equal((await server.app.services.jobs.find(job.id))?.status, 'succeeded');
        for (const session of sessions) {
          assert.equal(await storedCount(session.media), 0);
          assert.equal((await purgeLog(session.id)).length, 5);
        }
      });
    });

    describe('GET and PUT /student_sessions/:id/legal_hold', () => {
      let session: number;

      before(async () => {
        session = (await sessionWithMedia(exam, institute, owner, 1)).id;
      });

      it('answers an untouched hold', async () => {
        const hold = recordOf(await admin.client.v3('GET', HOLD, { id: session }), 'legal_hold');
        assert.deepEqual(hold, {
          student_session_id: session,
          held: false,
          reason: null,
          set_by: null,
          set_at: null,
          media_purged_at: null,
          purged_kinds: [],
        });
      });

      it('sets and clears the hold, naming who and when, and audit-logs each change', async () => {
        const set = recordOf(
          await admin.client.v3('PUT', HOLD, { id: session, hold: true, reason: '  Appeal pending ' }),
          'legal_hold',
        );
        assert.equal(set.held, true);
        assert.equal(set.reason, 'Appeal pending');
        assert.equal(set.set_by, admin.id);
        assert.equal(typeof set.set_at, 'string');
        assert.deepEqual(recordOf(await admin.client.v3('GET', HOLD, { id: session }), 'legal_hold'), set);

        const bySuperuser = recordOf(
          await superuser.client.v3('PUT', HOLD, { id: session, hold: 'false' }, { as: 'form' }),
          'legal_hold',
        );
        assert.equal(bySuperuser.held, false);
        assert.equal(bySuperuser.reason, null);
        assert.equal(bySuperuser.set_by, superuser.id);

        const events = await server.app.database.db
          .selectFrom('audit_events')
          .select(['action', 'user_id'])
          .where('target_type', '=', 'student_sessions')
          .where('target_id', '=', session)
          .orderBy('id')
          .execute();
        assert.deepEqual(
          events.map((event) => [event.action, event.user_id]),
          [
            ['legal_hold_set', admin.id],
            ['PUT /api/v3/student_sessions/:id/legal_hold', admin.id],
            ['legal_hold_cleared', superuser.id],
            ['PUT /api/v3/student_sessions/:id/legal_hold', superuser.id],
          ],
        );
      });

      it('answers 422 for a missing or unreadable hold and a reason too long, changing nothing', async () => {
        const missingHold = await admin.client.v3('PUT', HOLD, { id: session, reason: 'x' });
        assert.equal(missingHold.status, 422, missingHold.text);
        assert.deepEqual(missingHold.json, missing('hold'));
        const unreadable = await admin.client.v3('PUT', HOLD, { id: session, hold: 'maybe' });
        assert.equal(unreadable.status, 422, unreadable.text);
        assert.deepEqual(unreadable.json, invalid('hold', 'must be one of true, false, 1, 0'));
        const long = await admin.client.v3('PUT', HOLD, {
          id: session,
          hold: true,
          reason: 'x'.repeat(1001),
        });
        assert.equal(long.status, 422, long.text);
        assert.deepEqual(long.json, invalid('reason', 'is too long (maximum is 1000 characters)'));
        assert.equal(recordOf(await admin.client.v3('GET', HOLD, { id: session }), 'legal_hold').held, false);
      });

      it('refuses the exam owner and a proctor (403), hides the session from another institute (404)', async () => {
        for (const member of [owner, proctor]) {
          for (const answer of [
            await member.client.v3('GET', HOLD, { id: session }),
            await member.client.v3('PUT', HOLD, { id: session, hold: true }),
            await member.client.v3('GET', SESSION_PURGES, { id: session }),
            await member.client.v3('GET', '/purges'),
          ]) {
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          }
        }
        for (const id of [session, 987654321]) {
          const answer = await otherAdmin.client.v3('PUT', HOLD, { id, hold: true });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Student Session', id));
        }
        assert.equal(recordOf(await admin.client.v3('GET', HOLD, { id: session }), 'legal_hold').held, false);
      });

      it('refuses unsigned, wrongly signed, stale and replayed requests', async () => {
        const call = (options: Parameters<Member['client']['v3']>[3]) =>
          admin.client.v3('PUT', HOLD, { id: session, hold: true }, options);
        for (const answer of [
          await call({ unsigned: true }),
          await call({ signature: '0'.repeat(64) }),
          await call({ timestamp: Date.now() - 2 * DAY_MS }),
        ]) {
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        assert.equal(recordOf(await admin.client.v3('GET', HOLD, { id: session }), 'legal_hold').held, false);
        const nonce = String(Date.now());
        const timestamp = Date.now();
        assert.equal((await call({ nonce, timestamp })).status, 200);
        const replayed = await call({ nonce, timestamp });
        assert.equal(replayed.status, 403, replayed.text);
      });
    });

    describe('GET /student_sessions/:id/purges and GET /purges', () => {
      let purged: number;

      before(async () => {
        purged = (await sessionWithMedia(exam, institute, owner, 90)).id;
        await sessionWithMedia(foreverExam, keepForever, otherAdmin, 90);
        await server.app.services.retention.sweep();
      });

      it("lists a session's purges, newest first", async () => {
        const answer = await admin.client.v3('GET', SESSION_PURGES, { id: purged });
        const purges = listOf(answer, 'purges');
        assert.equal(answer.headers['x-pagination-item-count'], '5');
        assert.deepEqual(purges.map((entry) => entry.kind).sort(), [
          'face_photo',
          'id_photo',
          'recording',
          'recording_chunk',
          'upload',
        ]);
        const first = purges[0];
        assert.ok(first !== undefined);
        assert.deepEqual(Object.keys(first), [
          'id',
          'institute_id',
          'exam_id',
          'student_session_id',
          'kind',
          'files',
          'bytes',
          'reason',
          'retention_period',
          'rule',
          'purged_at',
        ]);
        assert.equal(first.student_session_id, purged);
        assert.equal(first.institute_id, institute);
        const ids = purges.map((entry) => Number(entry.id));
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => b - a),
        );
      });

      it("lists the institute's purges to its administrator, filtered and paged", async () => {
        const all = listOf(await admin.client.v3('GET', '/purges'), 'purges');
        assert.ok(all.length > 4);
        assert.ok(
          all.every((entry) => entry.institute_id === institute),
          'only its own institute',
        );
        const photos = listOf(
          await admin.client.v3('GET', '/purges', {
            filter: JSON.stringify({ student_session_id: { eq: purged }, kind: { eq: 'id_photo' } }),
          }),
          'purges',
        );
        assert.deepEqual(
          photos.map((entry) => [entry.kind, entry.files, entry.rule]),
          [['id_photo', 1, 'period']],
        );
        const paged = await admin.client.v3('GET', '/purges', { limit: 2, page: 1 });
        assert.equal(listOf(paged, 'purges').length, 2);
        const everyone = listOf(await superuser.client.v3('GET', '/purges', { limit: 300 }), 'purges');
        assert.ok(
          everyone.every((entry) => entry.institute_id !== keepForever || entry.kind === 'id_photo'),
          'no period there: only ID photos purged',
        );
        const bad = await admin.client.v3('GET', '/purges', {
          filter: JSON.stringify({ colour: { eq: 1 } }),
        });
        assert.equal(bad.status, 422, bad.text);
      });
    });
  });
}
