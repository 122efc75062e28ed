import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import { suspicionScore } from '../../../src/domain/flags/score.ts';
import { invalid, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const DISMISS = '/student_sessions/:id/incidents/:incident_id/dismiss';

const DEFAULT_SETTINGS = {
  no_face_seconds: 5,
  looking_away_seconds: 5,
  multiple_faces_seconds: 2,
  speech_forbidden: false,
  speech_seconds: 3,
  face_match: true,
  face_match_threshold: 0.5,
  detection_hz: 2,
};

function recordOf(answer: HttpAnswer, key: string, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body')[key], key);
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

interface FlagRow {
  readonly type: string;
  readonly confidence: number;
  readonly offsetTime: number;
  readonly endOffsetTime?: number | null;
}

for (const dialect of DIALECTS) {
  describe(`V3 automated flags [${dialect}]`, () => {
    let server: TestServer;
    let instituteA: number;
    let owner: TestUser;
    let admin: TestUser;
    let teacher: TestUser;
    let reviewer: TestUser;
    let proctor: TestUser;
    let auditor: TestUser;
    let outsider: TestUser;
    let exam: number;

    const actorOf = (user: TestUser): Actor => ({ id: user.id, instituteId: instituteA, role: 'teacher' });

    before(async () => {
      server = await startTestServer(dialect);
      instituteA = await server.institute();
      const instituteB = await server.institute();
      owner = await server.user(instituteA, 'teacher');
      admin = await server.user(instituteA, 'administrator');
      teacher = await server.user(instituteA, 'teacher');
      reviewer = await server.user(instituteA, 'reviewer');
      proctor = await server.user(instituteA, 'proctor');
      auditor = await server.user(instituteA, 'auditor');
      outsider = await server.user(instituteB, 'reviewer');
      exam = recordOf(
        await owner.client.v3('POST', '/exams', {
          name: 'Flagged exam',
          type: 'record_review',
          duration_minutes: 60,
          automated_flags: true,
        }),
        'exam',
        201,
      ).id as number;
    });
    after(() => server.close());

    let sessions = 0;
    /** A new finished session of the exam with these flags (and `others` staff incidents). */
    async function sessionWith(
      flags: readonly FlagRow[],
      others = 0,
    ): Promise<{ id: number; incidents: number[] }> {
      const { studentSessions, mail } = server.app.services;
      sessions += 1;
      const session = await studentSessions.create(actorOf(owner), exam, {
        name: `Candidate ${sessions}`,
        email: `flagged${sessions}@example.org`,
      });
      const incidents: number[] = [];
      const now = Date.now();
      for (const [index, flag] of flags.entries()) {
        const row = await server.app.database.db
          .insertInto('incidents')
          .values({
            student_session_id: session.id,
            kind: 'flag',
            source: 'automatic',
            type: flag.type,
            confidence: flag.confidence,
            offset_time: flag.offsetTime,
            end_offset_time: flag.endOffsetTime ?? null,
            episode_key: `episode-${index}`,
            comment: `Automatic flag: ${flag.type}`,
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        incidents.push(row.id);
      }
      for (let index = 0; index < others; index += 1) {
        await studentSessions.addIncident(actorOf(owner), session.id, {
          comment: `Seen ${index}`,
          offset_time: index,
        });
      }
      await mail.endExam(actorOf(owner), session.id);
      return { id: session.id, incidents };
    }

    describe('exam fields automated_flags and flag_settings', () => {
      it('default to off and to the default thresholds, shown in full', async () => {
        const created = recordOf(
          await owner.client.v3('POST', '/exams', { name: 'Plain', type: 'classroom', duration_minutes: 30 }),
          'exam',
          201,
        );
        assert.equal(created.automated_flags, false);
        assert.deepEqual(created.flag_settings, DEFAULT_SETTINGS);
      });

      it('are set on create, changed on update, and shown with the defaults filled in', async () => {
        const created = recordOf(
          await owner.client.v3('POST', '/exams', {
            name: 'Tuned',
            type: 'record_review',
            duration_minutes: 30,
            automated_flags: 'true',
            flag_settings: JSON.stringify({ no_face_seconds: 10, speech_forbidden: true }),
          }),
          'exam',
          201,
        );
        assert.equal(created.automated_flags, true);
        assert.deepEqual(created.flag_settings, {
          ...DEFAULT_SETTINGS,
          no_face_seconds: 10,
          speech_forbidden: true,
        });
        const id = created.id as number;
        const changed = recordOf(
          await owner.client.v3('PATCH', '/exams/:id', {
            id,
            flag_settings: JSON.stringify({ detection_hz: 4 }),
          }),
          'exam',
        );
        // Sent settings replace the stored ones as a whole.
        assert.deepEqual(changed.flag_settings, { ...DEFAULT_SETTINGS, detection_hz: 4 });
        assert.equal(changed.automated_flags, true, 'what is not sent stays');
        const shown = recordOf(await owner.client.v3('GET', '/exams/:id', { id }), 'exam');
        assert.deepEqual(shown.flag_settings, { ...DEFAULT_SETTINGS, detection_hz: 4 });
        const cleared = recordOf(
          await owner.client.v3('PATCH', '/exams/:id', { id, flag_settings: '', automated_flags: false }),
          'exam',
        );
        assert.deepEqual(cleared.flag_settings, DEFAULT_SETTINGS);
        assert.equal(cleared.automated_flags, false);
        const listed = await owner.client.v3('GET', '/exams', {
          filter: JSON.stringify({ automated_flags: { eq: true } }),
        });
        assert.equal(listed.status, 200, listed.text);
        const ids = (object(listed.json, 'body').exams as Json[]).map((item) => item.id);
        assert.ok(ids.includes(exam) && !ids.includes(id), 'automated_flags filters the list');
      });

      it('answers 422 naming the field or the key, changing nothing', async () => {
        const patch = (params: Record<string, string | number | boolean>) =>
          owner.client.v3('PATCH', '/exams/:id', { id: exam, ...params });
        assertAnswer(
          await patch({ automated_flags: 'maybe' }),
          422,
          invalid('automated_flags', 'must be one of true, false, 1, 0'),
        );
        assertAnswer(
          await patch({ flag_settings: JSON.stringify({ no_face_seconds: 0 }) }),
          422,
          invalid('flag_settings.no_face_seconds', 'must be from 1 to 600'),
        );
        assertAnswer(
          await patch({ flag_settings: JSON.stringify({ detection_hz: 50 }) }),
          422,
          invalid('flag_settings.detection_hz', 'must be from 0.5 to 10'),
        );
        assertAnswer(
          await patch({ flag_settings: JSON.stringify({ sneeze_seconds: 1 }) }),
          422,
          invalid('flag_settings', 'has an unknown key: sneeze_seconds'),
        );
        assertAnswer(
          await patch({ flag_settings: '[1]' }),
          422,
          invalid('flag_settings', 'must be an object'),
        );
        assertAnswer(
          await patch({ flag_settings: 'no_face=3' }),
          422,
          invalid('flag_settings', 'must be an object'),
        );
        const shown = recordOf(await owner.client.v3('GET', '/exams/:id', { id: exam }), 'exam');
        assert.deepEqual(shown.flag_settings, DEFAULT_SETTINGS);
        assert.equal(shown.automated_flags, true);
      });

      it('are read-only for those who may not manage the exam', async () => {
        assertAnswer(
          await reviewer.client.v3('PATCH', '/exams/:id', { id: exam, automated_flags: false }),
          403,
          NOT_AUTHORIZED,
        );
      });
    });

    describe('POST/DELETE /api/v3/student_sessions/:id/incidents/:incident_id/dismiss', () => {
      it('dismisses a flag (kept, marked, by whom) and restores it', async () => {
        const { id, incidents } = await sessionWith([{ type: 'no_face', confidence: 0.8, offsetTime: 5 }]);
        const [incidentId] = incidents;
        assert.ok(incidentId !== undefined);
        const dismissed = recordOf(
          await reviewer.client.v3('POST', DISMISS, { id, incident_id: incidentId }),
          'incident',
        );
        assert.equal(dismissed.id, incidentId);
        assert.equal(dismissed.dismissed, true);
        assert.equal(dismissed.dismissed_by, reviewer.id);
        assert.match(String(dismissed.dismissed_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        assert.equal(dismissed.type, 'no_face');
        assert.equal(dismissed.source, 'automatic');

        // A second dismissal keeps the first one's name and time.
        const again = recordOf(
          await owner.client.v3('POST', DISMISS, { id, incident_id: incidentId }),
          'incident',
        );
        assert.equal(again.dismissed_by, reviewer.id);
        assert.equal(again.dismissed_at, dismissed.dismissed_at);

        const student = recordOf(await proctor.client.v3('GET', '/student_sessions/:id', { id }), 'student');
        const [shown] = student.incidents as Json[];
        assert.equal(shown?.dismissed, true, 'the session record shows the flag, marked');

        const restored = recordOf(
          await admin.client.v3('DELETE', DISMISS, { id, incident_id: incidentId }),
          'incident',
        );
        assert.deepEqual(
          { dismissed: restored.dismissed, at: restored.dismissed_at, by: restored.dismissed_by },
          { dismissed: false, at: null, by: null },
        );
        // Restoring what is not dismissed changes nothing.
        const still = recordOf(
          await owner.client.v3('DELETE', DISMISS, { id, incident_id: incidentId }),
          'incident',
        );
        assert.equal(still.dismissed, false);
      });

      it('is recorded in the audit log like every staff write', async () => {
        const { id, incidents } = await sessionWith([{ type: 'speech', confidence: 1, offsetTime: 1 }]);
        const incidentId = incidents[0] ?? 0;
        recordOf(await reviewer.client.v3('POST', DISMISS, { id, incident_id: incidentId }), 'incident');
        recordOf(await reviewer.client.v3('DELETE', DISMISS, { id, incident_id: incidentId }), 'incident');
        const actions = async () =>
          (
            await server.app.database.db
              .selectFrom('audit_events')
              .select('action')
              .where('user_id', '=', reviewer.id)
              .execute()
          ).map((row) => row.action);
        for (let round = 0; round < 50 && (await actions()).length < 2; round += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const seen = await actions();
        assert.ok(seen.includes(`POST /api/v3${DISMISS}`), seen.join(', '));
        assert.ok(seen.includes(`DELETE /api/v3${DISMISS}`), seen.join(', '));
      });

      it('answers 403 to proctors and auditors, and to teachers who do not manage the exam 404', async () => {
        const { id, incidents } = await sessionWith([{ type: 'no_face', confidence: 1, offsetTime: 5 }]);
        const incidentId = incidents[0] ?? 0;
        for (const user of [proctor, auditor]) {
          assertAnswer(
            await user.client.v3('POST', DISMISS, { id, incident_id: incidentId }),
            403,
            NOT_AUTHORIZED,
          );
          assertAnswer(
            await user.client.v3('DELETE', DISMISS, { id, incident_id: incidentId }),
            403,
            NOT_AUTHORIZED,
          );
        }
        assertAnswer(
          await teacher.client.v3('POST', DISMISS, { id, incident_id: incidentId }),
          404,
          notFound('Student Session', id),
        );
        assertAnswer(
          await outsider.client.v3('POST', DISMISS, { id, incident_id: incidentId }),
          404,
          notFound('Student Session', id),
        );
        const student = recordOf(await owner.client.v3('GET', '/student_sessions/:id', { id }), 'student');
        assert.equal((student.incidents as Json[])[0]?.dismissed, false, 'nothing was dismissed');
      });

      it('answers 404 for an incident of another session, or none, and 422 for an incident that is no flag', async () => {
        const first = await sessionWith([{ type: 'no_face', confidence: 1, offsetTime: 5 }]);
        const second = await sessionWith([], 1);
        const firstIncident = first.incidents[0] ?? 0;
        assertAnswer(
          await reviewer.client.v3('POST', DISMISS, { id: second.id, incident_id: firstIncident }),
          404,
          notFound('Incident', firstIncident),
        );
        assertAnswer(
          await reviewer.client.v3('POST', DISMISS, { id: first.id, incident_id: 987654321 }),
          404,
          notFound('Incident', 987654321),
        );
        assertAnswer(
          await reviewer.client.v3('POST', DISMISS, { id: first.id, incident_id: 'abc' }),
          404,
          notFound('Incident', 'abc'),
        );
        const staffIncident = (
          recordOf(await owner.client.v3('GET', '/student_sessions/:id', { id: second.id }), 'student')
            .incidents as Json[]
        )[0];
        assert.equal(staffIncident?.source, null);
        assert.equal(staffIncident?.dismissed, false);
        assertAnswer(
          await reviewer.client.v3('POST', DISMISS, {
            id: second.id,
            incident_id: staffIncident?.id as number,
          }),
          422,
          invalid('incident_id', 'is not an automated flag'),
        );
      });
    });

    describe('review queue suspicion_score', () => {
      it('scores each session from its undismissed flags, the highest first by default', async () => {
        const quiet = await sessionWith([], 3);
        const tabs = await sessionWith([
          { type: 'tab_switch', confidence: 1, offsetTime: 10 },
          { type: 'tab_switch', confidence: 1, offsetTime: 50 },
        ]);
        const flags: FlagRow[] = [
          { type: 'multiple_faces', confidence: 0.9, offsetTime: 0, endOffsetTime: 90 },
          { type: 'no_face', confidence: 0.75, offsetTime: 100, endOffsetTime: 130 },
          { type: 'face_mismatch', confidence: 0.3, offsetTime: 200 },
        ];
        const busy = await sessionWith(flags);
        const capped = await sessionWith(
          Array.from({ length: 12 }, (_unused, index) => ({
            type: 'virtual_camera',
            confidence: 1,
            offsetTime: index * 10,
          })),
        );
        const queue = async (query: Record<string, string> = {}) => {
          const answer = await reviewer.client.v3('GET', '/exams/:exam_id/review_queue', {
            exam_id: exam,
            ...query,
          });
          assert.equal(answer.status, 200, answer.text);
          return (object(answer.json, 'body').review_queue as Json[]).filter((entry) =>
            [quiet.id, tabs.id, busy.id, capped.id].includes(entry.id as number),
          );
        };
        const expectedBusy = suspicionScore(
          flags.map((flag) => ({
            source: 'automatic',
            type: flag.type,
            confidence: flag.confidence,
            offsetTime: flag.offsetTime,
            endOffsetTime: flag.endOffsetTime ?? null,
            dismissedAt: null,
          })),
        );
        // multiple_faces 15 × 0.9 × 2.5 = 33.75; no_face 10 × 0.75 × 1.5 = 11.25; face_mismatch 8 × 0.3 = 2.4
        assert.equal(expectedBusy, 47);
        const scores = (entries: Json[]) => entries.map((entry) => [entry.id, entry.suspicion_score]);
        assert.deepEqual(scores(await queue()), [
          [capped.id, 100],
          [busy.id, 47],
          [tabs.id, 16],
          [quiet.id, 0],
        ]);
        assert.deepEqual(scores(await queue({ sort: JSON.stringify([{ suspicion_score: 'asc' }]) })), [
          [quiet.id, 0],
          [tabs.id, 16],
          [busy.id, 47],
          [capped.id, 100],
        ]);
        assert.deepEqual(
          scores(await queue({ filter: JSON.stringify({ suspicion_score: { gte: 40, lt: 100 } }) })),
          [[busy.id, 47]],
        );

        // A dismissed flag stops counting; restored, it counts again.
        const tabIncident = tabs.incidents[0] ?? 0;
        recordOf(
          await reviewer.client.v3('POST', DISMISS, { id: tabs.id, incident_id: tabIncident }),
          'incident',
        );
        assert.equal((await queue()).find((entry) => entry.id === tabs.id)?.suspicion_score, 8);
        recordOf(
          await reviewer.client.v3('DELETE', DISMISS, { id: tabs.id, incident_id: tabIncident }),
          'incident',
        );
        assert.equal((await queue()).find((entry) => entry.id === tabs.id)?.suspicion_score, 16);
      });

      it('refuses an unknown sort field by name, as before', async () => {
        const answer = await reviewer.client.v3('GET', '/exams/:exam_id/review_queue', {
          exam_id: exam,
          sort: JSON.stringify([{ suspicion: 'desc' }]),
        });
        assert.equal(answer.status, 422, answer.text);
      });
    });
  });
}
