import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
const PATH = '/exams/:id/email_preview';

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/exams/:id/email_preview [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let owner: TestUser & { email: string };
    let proctor: TestUser;
    let otherTeacher: TestUser;
    let outsider: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { env: { PUBLIC_URL } });
      instituteId = await server.institute();
      owner = await staffUser(server, instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      otherTeacher = await server.user(instituteId, 'teacher');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(() => server.close());

    async function createExam(): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Statistics <II>',
        type: 'record_review',
        duration_minutes: 90,
        start_time: '2026-11-21T09:00:00Z',
        end_time: '2026-11-21T12:00:00Z',
        web_cam: true,
        timezone: 'Europe/Berlin',
      });
      assert.equal(answer.status, 201, answer.text);
      return Number(object(object(answer.json, 'body').exam, 'exam').id);
    }

    async function addStudent(examId: number, params: Record<string, Scalar>): Promise<Json> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    function preview(user: TestUser, params: Record<string, Scalar>): Promise<HttpAnswer> {
      return user.client.v3('GET', PATH, { kind: 'exam_link', ...params });
    }

    async function outboxRows() {
      return server.app.database.db
        .selectFrom('outbox')
        .select(['kind', 'to_address', 'subject', 'text_body', 'html_body', 'student_session_id'])
        .orderBy('id')
        .execute();
    }

    it('answers exactly the subject, text and HTML that send_emails then writes to the outbox', async () => {
      const exam = await createExam();
      const ann = await addStudent(exam, {
        name: 'Ann <Lee>',
        email: 'Ann@Example.org',
        individual_info: '<p>Room <b>4</b></p><script>x()</script>',
        is_individual_info_html: true,
        open_time: '2026-11-21T10:00:00Z',
      });
      const bob = await addStudent(exam, {
        name: 'Bob',
        email: 'bob@example.org',
        individual_info: 'Desk 7',
      });
      const before = await outboxRows();
      const previews = new Map<number, Json>();
      for (const student of [ann, bob]) {
        const answer = await preview(owner, { id: exam, student_session_id: Number(student.id) });
        assert.equal(answer.status, 200, answer.text);
        previews.set(Number(student.id), object(answer.json, 'preview'));
      }
      assert.deepEqual(await outboxRows(), before, 'a preview writes nothing');
      const annPreview = object(previews.get(Number(ann.id)), 'ann');
      assert.deepEqual(Object.keys(annPreview), ['kind', 'to', 'subject', 'text', 'html', 'sample']);
      assert.equal(annPreview.kind, 'exam_link');
      assert.equal(annPreview.to, 'ann@example.org');
      assert.equal(annPreview.sample, false);
      const link = `${PUBLIC_URL}/room/${String(ann.token)}`;
      assert.ok(String(annPreview.text).includes(link), 'the text names the room link');
      assert.ok(String(annPreview.html).includes(`href="${link}"`), 'the HTML links the room');
      assert.ok(
        !String(annPreview.html).includes('<script>'),
        'individual HTML is sanitised as in the email',
      );

      const sent = await owner.client.v3('POST', '/exams/:id/send_emails', { id: exam });
      assert.equal(sent.status, 200, sent.text);
      const written = (await outboxRows()).filter((row) => previews.has(Number(row.student_session_id)));
      assert.equal(written.length, 2);
      for (const row of written) {
        const shown = object(previews.get(Number(row.student_session_id)), 'preview');
        assert.deepEqual(
          {
            kind: row.kind,
            to: row.to_address,
            subject: row.subject,
            text: row.text_body,
            html: row.html_body,
          },
          { kind: shown.kind, to: shown.to, subject: shown.subject, text: shown.text, html: shown.html },
        );
      }
    });

    it('previews for a clearly fake candidate without student_session_id (or with it empty)', async () => {
      const exam = await createExam();
      for (const params of [{ id: exam }, { id: exam, student_session_id: '' }] as Record<string, Scalar>[]) {
        const answer = await preview(owner, params);
        assert.equal(answer.status, 200, answer.text);
        const body = object(answer.json, 'preview');
        assert.equal(body.sample, true);
        assert.equal(body.to, 'sample.student@example.invalid');
        assert.equal(body.subject, 'Your exam link: Statistics <II>');
        assert.match(String(body.text), /^Hello Sample Student,/);
        assert.ok(String(body.text).includes(`${PUBLIC_URL}/room/sample-link-for-preview-only`));
        assert.ok(String(body.text).includes('Once started, you have 90 minutes.'));
        assert.ok(String(body.text).includes('Europe/Berlin'), 'in the exam time zone, as the email');
        assert.ok(String(body.html).includes('Statistics &lt;II&gt;'));
      }
      const room = await server.app.services.room
        .view('sample-link-for-preview-only')
        .catch((error: unknown) => error);
      assert.ok(room instanceof Error, 'the sample link opens no room');
    });

    it('works for the console: staff cookie, no CSRF header needed for this read', async () => {
      const exam = await createExam();
      const browser = await signIn(server, owner.email);
      const answer = await consoleV3(server, browser, 'GET', `/exams/${exam}/email_preview?kind=exam_link`);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(object(answer.json, 'preview').sample, true);
    });

    it('answers 422 for a missing or unknown kind, 404 for a session of another exam or none', async () => {
      const exam = await createExam();
      const other = await createExam();
      const stranger = await addStudent(other, { name: 'Cy', email: 'cy@example.org' });
      assert.deepEqual((await owner.client.v3('GET', PATH, { id: exam })).json, missing('kind'));
      assert.deepEqual(
        (await owner.client.v3('GET', PATH, { id: exam, kind: 'exam_finished' })).json,
        invalid('kind', 'is not included in the list'),
      );
      for (const id of [Number(stranger.id), 987654321, 'abc']) {
        const answer = await preview(owner, { id: exam, student_session_id: id });
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, notFound('Student Session', id));
      }
    });

    it('lets only managers preview: 403 for a proctor, 404 for a teacher not on the exam and another institute', async () => {
      const exam = await createExam();
      const student = await addStudent(exam, { name: 'Di', email: 'di@example.org' });
      const params = { id: exam, student_session_id: Number(student.id) };
      const refused = await preview(proctor, params);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, NOT_AUTHORIZED);
      for (const user of [otherTeacher, outsider]) {
        const answer = await preview(user, params);
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, notFound('Exam', exam));
      }
      const unsigned = await owner.client.v3(
        'GET',
        PATH,
        { kind: 'exam_link', ...params },
        { unsigned: true },
      );
      const wrong = await owner.client.v3(
        'GET',
        PATH,
        { kind: 'exam_link', ...params },
        { signature: 'b'.repeat(64) },
      );
      for (const answer of [unsigned, wrong]) {
        assert.equal(answer.status, 403);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
    });
  });
}
