import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { type Browser, consoleV3, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type Staff = Awaited<ReturnType<typeof staffUser>>;

const REVIEW = '/student_sessions/:id/review';
const SESSION = '/student_sessions/:id';

/** The object under `key` of a 200 answer; fails the test otherwise. */
function recordOf(answer: HttpAnswer, key: string): Json {
  assert.equal(answer.status, 200, answer.text);
  const record = (answer.json as Json)[key];
  assert.ok(typeof record === 'object' && record !== null && !Array.isArray(record), answer.text);
  return record as Json;
}

const reviewOf = (answer: HttpAnswer) => recordOf(answer, 'review');
const historyOf = (review: Json) => review.history as Json[];
const secondOf = (review: Json) => review.second_review as Json;

for (const dialect of DIALECTS) {
  describe(`review verdicts [${dialect}]`, () => {
    let server: TestServer;
    let instituteA: number;
    let admin: Staff;
    let owner: Staff;
    let reviewer: Staff;
    let secondReviewer: Staff;
    let proctor: Staff;
    let auditor: Staff;
    let outsider: Staff;
    let secondBrowser: Browser;
    let exam: number;

    const actor = (user: Staff, role: Actor['role']): Actor => ({
      id: user.id,
      instituteId: instituteA,
      role,
    });

    /** A new session of the exam, finished, with `incidents` incidents. Returns its id. */
    async function finishedSession(incidents = 0, finish = true): Promise<number> {
      const { studentSessions, mail } = server.app.services;
      const session = await studentSessions.create(actor(owner, 'teacher'), exam, {
        name: 'Candidate',
        email: `candidate-${crypto.randomUUID()}@example.org`,
      });
      for (let index = 0; index < incidents; index += 1) {
        await studentSessions.addIncident(actor(owner, 'teacher'), session.id, {
          comment: `Incident ${index + 1}`,
          offset_time: 10 * index,
        });
      }
      if (finish) await mail.endExam(actor(owner, 'teacher'), session.id);
      return session.id;
    }

    const nameOf = async (user: Staff) =>
      (
        await server.app.database.db
          .selectFrom('users')
          .select('name')
          .where('id', '=', user.id)
          .executeTakeFirstOrThrow()
      ).name;

    async function setSecondReview(required: boolean): Promise<void> {
      const answer = await admin.client.v3('PATCH', '/institutes/:id', {
        id: instituteA,
        second_review_required: required,
      });
      assert.equal(recordOf(answer, 'institute').second_review_required, required);
    }

    const put = (user: Staff, id: number, verdict: string, comment?: string) =>
      user.client.v3('PUT', REVIEW, { id, verdict, ...(comment === undefined ? {} : { comment }) });

    before(async () => {
      server = await startTestServer(dialect);
      instituteA = await server.institute();
      const instituteB = await server.institute();
      admin = await staffUser(server, instituteA, 'administrator');
      owner = await staffUser(server, instituteA, 'teacher');
      reviewer = await staffUser(server, instituteA, 'reviewer');
      secondReviewer = await staffUser(server, instituteA, 'global_reviewer');
      proctor = await staffUser(server, instituteA, 'proctor');
      auditor = await staffUser(server, instituteA, 'auditor');
      outsider = await staffUser(server, instituteB, 'reviewer');
      secondBrowser = await signIn(server, secondReviewer.email);
      exam = (
        await server.app.services.exams.create(actor(owner, 'teacher'), {
          name: 'Reviewed exam',
          type: 'record_review',
          duration_minutes: 60,
        })
      ).id;
    });
    after(() => server.close());

    describe('GET /api/v3/student_sessions/:id/review', () => {
      it('answers not_reviewed with an empty history before any verdict', async () => {
        const id = await finishedSession();
        const review = reviewOf(await proctor.client.v3('GET', REVIEW, { id }));
        assert.deepEqual(review, {
          student_session_id: id,
          verdict: 'not_reviewed',
          comment: null,
          reviewer: null,
          reviewed_at: null,
          confirmed: true,
          reviewed: 'not_reviewed',
          second_review: {
            required: false,
            status: 'not_required',
            first_reviewer: null,
            confirmed_by: null,
            confirmed_at: null,
          },
          history: [],
        });
      });

      it('answers 404 for a session of another institute and for a missing one', async () => {
        const id = await finishedSession();
        const answer = await outsider.client.v3('GET', REVIEW, { id });
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, notFound('Student Session', id));
        const none = await reviewer.client.v3('GET', REVIEW, { id: 987654321 });
        assert.equal(none.status, 404);
        assert.deepEqual(none.json, notFound('Student Session', 987654321));
      });
    });

    describe('PUT /api/v3/student_sessions/:id/review', () => {
      it('records each verdict as a new history entry with reviewer, time and comment', async () => {
        const id = await finishedSession();
        reviewOf(await put(reviewer, id, 'in_review'));
        const review = reviewOf(await put(reviewer, id, 'passed', 'Nothing wrong'));
        assert.equal(review.verdict, 'passed');
        assert.equal(review.comment, 'Nothing wrong');
        assert.deepEqual(review.reviewer, { id: reviewer.id, name: await nameOf(reviewer) });
        assert.match(String(review.reviewed_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.deepEqual(
          historyOf(review).map((entry) => [entry.verdict, entry.comment, (entry.reviewer as Json).id]),
          [
            ['in_review', null, reviewer.id],
            ['passed', 'Nothing wrong', reviewer.id],
          ],
        );
        const student = recordOf(await owner.client.v3('GET', SESSION, { id }), 'student');
        assert.equal(student.reviewed, 'passed');
      });

      it('takes a verdict from the console with its session cookie and CSRF token, never without the token', async () => {
        const id = await finishedSession();
        const refused = await consoleV3(server, secondBrowser, 'PUT', `/student_sessions/${id}/review`, {
          body: { verdict: 'suspicious' },
        });
        assert.equal(refused.status, 403);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
        const review = reviewOf(
          await consoleV3(server, secondBrowser, 'PUT', `/student_sessions/${id}/review`, {
            body: { verdict: 'suspicious', comment: 'Looks away often' },
            csrf: secondBrowser.csrf,
          }),
        );
        assert.equal(review.verdict, 'suspicious');
        assert.equal((review.reviewer as Json).id, secondReviewer.id);
        const read = reviewOf(
          await consoleV3(server, secondBrowser, 'GET', `/student_sessions/${id}/review`),
        );
        assert.equal(read.comment, 'Looks away often');
      });

      it('adds nothing to the history when the same reviewer repeats the newest verdict exactly', async () => {
        const id = await finishedSession();
        await put(reviewer, id, 'passed', 'Fine');
        const again = reviewOf(await put(reviewer, id, 'passed', 'Fine'));
        assert.equal(historyOf(again).length, 1);
        const changed = reviewOf(await put(reviewer, id, 'passed', 'Fine after all'));
        assert.equal(historyOf(changed).length, 2);
      });

      it('answers 422 naming a missing or unknown verdict, and changes nothing', async () => {
        const id = await finishedSession();
        const none = await reviewer.client.v3('PUT', REVIEW, { id });
        assert.equal(none.status, 422);
        assert.deepEqual(none.json, missing('verdict'));
        const wrong = await put(reviewer, id, 'guilty');
        assert.equal(wrong.status, 422);
        assert.deepEqual(wrong.json, invalid('verdict', 'is not included in the list'));
        const long = await put(reviewer, id, 'passed', 'x'.repeat(10_001));
        assert.equal(long.status, 422);
        assert.deepEqual(long.json, invalid('comment', 'is too long (maximum is 10000 characters)'));
        assert.deepEqual(historyOf(reviewOf(await reviewer.client.v3('GET', REVIEW, { id }))), []);
      });

      it('answers 403 to proctors and auditors, who read reviews but do not judge', async () => {
        const id = await finishedSession();
        for (const user of [proctor, auditor]) {
          const answer = await put(user, id, 'passed');
          assert.equal(answer.status, 403);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          reviewOf(await user.client.v3('GET', REVIEW, { id }));
        }
      });

      it('lets the exam owner and an administrator record verdicts too', async () => {
        const id = await finishedSession();
        reviewOf(await put(owner, id, 'in_review'));
        const review = reviewOf(await put(admin, id, 'passed'));
        assert.deepEqual(
          historyOf(review).map((entry) => (entry.reviewer as Json).id),
          [owner.id, admin.id],
        );
      });

      it('answers 404 to a reviewer of another institute', async () => {
        const id = await finishedSession();
        const answer = await put(outsider, id, 'violation');
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, notFound('Student Session', id));
      });
    });

    describe('the second review (institute setting second_review_required)', () => {
      before(() => setSecondReview(true));
      after(() => setSecondReview(false));

      it('keeps a violation pending until a different reviewer confirms it; nobody confirms their own', async () => {
        const id = await finishedSession(2);
        const pending = reviewOf(await put(reviewer, id, 'violation', 'Phone on the desk'));
        assert.equal(pending.verdict, 'violation');
        assert.equal(pending.confirmed, false);
        assert.equal(pending.reviewed, 'in_review');
        assert.deepEqual(secondOf(pending), {
          required: true,
          status: 'pending',
          first_reviewer: { id: reviewer.id, name: await nameOf(reviewer) },
          confirmed_by: null,
          confirmed_at: null,
        });
        // The session record never shows an unconfirmed violation.
        assert.equal(
          recordOf(await owner.client.v3('GET', SESSION, { id }), 'student').reviewed,
          'in_review',
        );

        const own = await put(reviewer, id, 'violation', 'I insist');
        assert.equal(own.status, 403);
        assert.deepEqual(own.json, NOT_AUTHORIZED);

        const confirmed = reviewOf(
          await consoleV3(server, secondBrowser, 'PUT', `/student_sessions/${id}/review`, {
            body: { verdict: 'violation', comment: 'Confirmed on the screen recording' },
            csrf: secondBrowser.csrf,
          }),
        );
        assert.equal(confirmed.confirmed, true);
        assert.equal(confirmed.reviewed, 'violation');
        const second = secondOf(confirmed);
        assert.equal(second.status, 'confirmed');
        assert.equal((second.first_reviewer as Json).id, reviewer.id);
        assert.equal((second.confirmed_by as Json).id, secondReviewer.id);
        assert.equal(second.confirmed_at, confirmed.reviewed_at);
        assert.deepEqual(
          historyOf(confirmed).map((entry) => [entry.verdict, entry.second_review]),
          [
            ['violation', 'pending'],
            ['violation', 'confirmed'],
          ],
        );
        assert.equal(
          recordOf(await owner.client.v3('GET', SESSION, { id }), 'student').reviewed,
          'violation',
        );
      });

      it('lets a different reviewer change a pending violation to another verdict', async () => {
        const id = await finishedSession();
        await put(reviewer, id, 'violation');
        const changed = reviewOf(await put(secondReviewer, id, 'suspicious', 'Not enough evidence'));
        assert.equal(changed.verdict, 'suspicious');
        assert.equal(changed.confirmed, true);
        assert.equal(secondOf(changed).status, 'not_required');
        assert.equal(
          recordOf(await owner.client.v3('GET', SESSION, { id }), 'student').reviewed,
          'suspicious',
        );
      });

      it('lets the first reviewer withdraw a pending violation to a lower verdict', async () => {
        const id = await finishedSession();
        await put(reviewer, id, 'violation');
        const withdrawn = reviewOf(await put(reviewer, id, 'suspicious'));
        assert.equal(withdrawn.verdict, 'suspicious');
        assert.equal(withdrawn.confirmed, true);
      });
    });

    it('settles a violation at once when the institute does not require a second review', async () => {
      const id = await finishedSession();
      const review = reviewOf(await put(reviewer, id, 'violation'));
      assert.equal(review.confirmed, true);
      assert.equal(review.reviewed, 'violation');
      assert.equal(secondOf(review).status, 'not_required');
    });

    describe('PATCH /api/v3/student_sessions/:id with reviewed', () => {
      it('records the verdict through the same rules, for a reviewer too', async () => {
        const id = await finishedSession();
        const student = recordOf(
          await reviewer.client.v3('PATCH', SESSION, { id, reviewed: 'passed', comment: 'Clean' }),
          'student',
        );
        assert.equal(student.reviewed, 'passed');
        const review = reviewOf(await reviewer.client.v3('GET', REVIEW, { id }));
        assert.deepEqual(
          historyOf(review).map((entry) => [entry.verdict, entry.comment]),
          [['passed', 'Clean']],
        );
      });

      it('applies a manager’s other changes with the verdict', async () => {
        const id = await finishedSession();
        const student = recordOf(
          await owner.client.v3('PATCH', SESSION, { id, name: 'Renamed', reviewed: 'suspicious' }),
          'student',
        );
        assert.equal(student.name, 'Renamed');
        assert.equal(student.reviewed, 'suspicious');
      });

      it('refuses a reviewer’s other changes (403) and records nothing', async () => {
        const id = await finishedSession();
        const answer = await reviewer.client.v3('PATCH', SESSION, {
          id,
          name: 'Renamed',
          reviewed: 'passed',
        });
        assert.equal(answer.status, 403);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.deepEqual(historyOf(reviewOf(await reviewer.client.v3('GET', REVIEW, { id }))), []);
      });

      it('answers 422 naming reviewed for an unknown verdict', async () => {
        const id = await finishedSession();
        const answer = await owner.client.v3('PATCH', SESSION, { id, reviewed: 'maybe' });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.json, invalid('reviewed', 'is not included in the list'));
      });

      it('goes through the second-review rule', async () => {
        await setSecondReview(true);
        try {
          const id = await finishedSession();
          const pending = recordOf(
            await reviewer.client.v3('PATCH', SESSION, { id, reviewed: 'violation' }),
            'student',
          );
          assert.equal(pending.reviewed, 'in_review');
          const own = await reviewer.client.v3('PATCH', SESSION, { id, reviewed: 'violation' });
          assert.equal(own.status, 403);
          const confirmed = recordOf(
            await secondReviewer.client.v3('PATCH', SESSION, { id, reviewed: 'violation' }),
            'student',
          );
          assert.equal(confirmed.reviewed, 'violation');
        } finally {
          await setSecondReview(false);
        }
      });
    });

    describe('GET /api/v3/student_sessions/:id/reviewable (compat)', () => {
      const tokenOf = async (id: number) =>
        (
          await server.app.database.db
            .selectFrom('student_sessions')
            .select('token')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).token;

      it('answers the student record by its room token to a reviewer who may review it', async () => {
        const id = await finishedSession(1);
        const token = await tokenOf(id);
        const path = '/student_sessions/:id/reviewable';
        const student = recordOf(await reviewer.client.v3('GET', path, { id: token }), 'student');
        assert.equal(student.id, id);
        assert.equal(student.token, token);
        assert.equal(student.incidents_count, 1);
        const same = recordOf(await reviewer.client.v3('GET', SESSION, { id }), 'student');
        assert.deepEqual(student, same);
        const fromConsole = await consoleV3(
          server,
          secondBrowser,
          'GET',
          `/student_sessions/${token}/reviewable`,
        );
        assert.equal(recordOf(fromConsole, 'student').id, id);
      });

      it('accepts the original Go client’s exact request: the token signed as id=<token>', async () => {
        const id = await finishedSession();
        const token = await tokenOf(id);
        // As the public Go client builds it: route parameter first under its original name `id`,
        // then nonce and timestamp, joined by `?`, HMAC-SHA256 hex; only nonce, timestamp and
        // signature travel, in the query string.
        const timestamp = String(Date.now());
        const nonce = `${timestamp}${String(id).padStart(6, '0')}`;
        const message = `id=${token}?nonce=${nonce}?timestamp=${timestamp}`;
        const signature = crypto
          .createHmac('sha256', reviewer.credentials.secretKey)
          .update(message)
          .digest('hex');
        const query = new URLSearchParams({ nonce, timestamp, signature });
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/student_sessions/${token}/reviewable?${query.toString()}`,
          headers: {
            accept: 'application/vnd.procwise.v3',
            authorization: `Token token=${reviewer.credentials.apiToken}`,
          },
        });
        assert.equal(recordOf(answer, 'student').id, id);
        // The name this route once had is no longer what is signed.
        const asToken = new URLSearchParams({
          nonce: `${nonce}1`,
          timestamp,
          signature: crypto
            .createHmac('sha256', reviewer.credentials.secretKey)
            .update(`nonce=${nonce}1?timestamp=${timestamp}?token=${token}`)
            .digest('hex'),
        });
        const refused = await httpRequest({
          url: `${server.baseUrl}/api/v3/student_sessions/${token}/reviewable?${asToken.toString()}`,
          headers: {
            accept: 'application/vnd.procwise.v3',
            authorization: `Token token=${reviewer.credentials.apiToken}`,
          },
        });
        assert.equal(refused.status, 403);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
      });

      it('answers 404 naming the token to anyone who may not review it, and for an unknown token', async () => {
        const id = await finishedSession();
        const token = await tokenOf(id);
        const path = '/student_sessions/:id/reviewable';
        for (const user of [proctor, auditor, outsider]) {
          const answer = await user.client.v3('GET', path, { id: token });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, { error: `Couldn't find Student Session with 'token'=${token}` });
        }
        const unknown = await reviewer.client.v3('GET', path, { id: 'f'.repeat(32) });
        assert.equal(unknown.status, 404);
        // A session id is no token.
        const byId = await reviewer.client.v3('GET', path, { id: String(id) });
        assert.equal(byId.status, 404);
      });
    });

    describe('GET /api/v3/exams/:exam_id/review_queue', () => {
      let queueExam: number;
      let few: number;
      let many: number;
      let none: number;

      before(async () => {
        const previous = exam;
        exam = (
          await server.app.services.exams.create(actor(owner, 'teacher'), {
            name: 'Queued exam',
            type: 'record_review',
            duration_minutes: 60,
          })
        ).id;
        queueExam = exam;
        few = await finishedSession(1);
        many = await finishedSession(3);
        none = await finishedSession(0);
        await finishedSession(5, false);
        exam = previous;
        await put(reviewer, few, 'passed', 'Fine');
        await put(reviewer, many, 'violation', 'Notes');
      });

      const queue = (user: Staff, params: Record<string, string | number> = {}) =>
        user.client.v3('GET', '/exams/:exam_id/review_queue', { exam_id: queueExam, ...params });
      const listOf = (answer: HttpAnswer) => {
        assert.equal(answer.status, 200, answer.text);
        return (answer.json as { review_queue: Json[] }).review_queue;
      };

      it('lists the finished sessions, most incidents first, with verdict and pagination headers', async () => {
        const answer = await queue(reviewer);
        const list = listOf(answer);
        assert.deepEqual(
          list.map((entry) => [entry.id, entry.incidents_count, entry.verdict]),
          [
            [many, 3, 'violation'],
            [few, 1, 'passed'],
            [none, 0, 'not_reviewed'],
          ],
        );
        assert.equal(answer.headers['x-pagination-item-count'], '3');
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        const first = list[1] as Json;
        assert.equal(first.comment, 'Fine');
        assert.equal((first.reviewer as Json).id, reviewer.id);
        assert.equal(first.confirmed, true);
        const page = await queue(reviewer, { limit: 1, page: 2 });
        assert.deepEqual(
          listOf(page).map((entry) => entry.id),
          [few],
        );
        assert.equal(page.headers['x-pagination-page-count'], '3');
      });

      it('filters by verdict (shortcut and filter) and sorts as asked', async () => {
        assert.deepEqual(
          listOf(await queue(auditor, { verdict: 'passed,not_reviewed' })).map((entry) => entry.id),
          [few, none],
        );
        assert.deepEqual(
          listOf(await queue(proctor, { filter: JSON.stringify({ verdict: { eq: 'violation' } }) })).map(
            (entry) => entry.id,
          ),
          [many],
        );
        assert.deepEqual(
          listOf(await queue(owner, { sort: JSON.stringify([{ id: 'asc' }]) })).map((entry) => entry.id),
          [few, many, none],
        );
      });

      it('answers 422 for an unknown verdict or filter field, 404 outside the institute', async () => {
        const bad = await queue(reviewer, { verdict: 'guilty' });
        assert.equal(bad.status, 422);
        assert.deepEqual(bad.json, invalid('verdict', 'is not included in the list'));
        const field = await queue(reviewer, { filter: JSON.stringify({ token: { eq: 'x' } }) });
        assert.equal(field.status, 422);
        const outside = await queue(outsider);
        assert.equal(outside.status, 404);
        assert.deepEqual(outside.json, notFound('Exam', queueExam));
      });
    });

    it('records every verdict change in the audit log by name, never the verdict or comment', async () => {
      const id = await finishedSession();
      await put(reviewer, id, 'passed', 'secret remark');
      await reviewer.client.v3('PATCH', SESSION, { id, reviewed: 'suspicious' });
      await put(reviewer, id, 'suspicious'); // a repeat: no change, no event
      const answer = await admin.client.v3('GET', '/audit_events', {
        filter: JSON.stringify({ target_id: { eq: id }, target_type: { eq: 'student_sessions' } }),
      });
      assert.equal(answer.status, 200, answer.text);
      const events = (answer.json as { audit_events: Json[] }).audit_events;
      const named = events.filter((event) => event.action === 'student_session_reviewed');
      assert.equal(named.length, 2);
      for (const event of named) assert.equal(event.user_id, reviewer.id);
      assert.ok(events.some((event) => event.action === 'PUT /api/v3/student_sessions/:id/review'));
      assert.ok(!answer.text.includes('secret remark'));
    });
  });
}
