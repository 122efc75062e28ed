/**
 * An institute's own wording of candidate messages (docs/languages.md, "An institute's own
 * wording"): `GET|PUT /api/v3/institutes/:id/message_overrides` for its administrators, the checks
 * against the catalogue, and the wording reaching the room's view.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { catalogue } from '../../../src/i18n/catalogues.ts';
import { messageMismatch } from '../../../src/i18n/translate.ts';
import { invalid } from '../../helpers/answers.ts';
import { httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** A candidate message with a placeholder, as the catalogue has it now. */
function placeholderKey(): string {
  const key = Object.keys(catalogue('en')).find(
    (name) => name.startsWith('candidate.') && /\{[a-zA-Z]+\}/.test(catalogue('en')[name] ?? ''),
  );
  assert.ok(key, 'a candidate message with a placeholder');
  return key;
}

for (const dialect of DIALECTS) {
  describe(`institute message overrides [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let admin: TestUser;
    let teacher: TestUser;
    let otherAdmin: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
      admin = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      otherAdmin = await server.user(await server.institute(), 'administrator');
    });

    after(async () => {
      await server.close();
    });

    function save(user: TestUser, params: Record<string, string | null>) {
      return user.client.v3('PUT', '/institutes/:id/message_overrides', { id: instituteId, ...params });
    }

    it('lists every message an institute may reword with the English and the catalogue’s wording', async () => {
      const answer = await admin.client.v3('GET', '/institutes/:id/message_overrides', {
        id: instituteId,
        locale: 'nl',
      });
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.equal(body.locale, 'nl');
      const messages = body.messages as Record<string, unknown>[];
      const key = placeholderKey();
      assert.deepEqual(
        messages.find((message) => message.key === key),
        {
          key,
          english: catalogue('en')[key],
          catalogue: catalogue('nl')[key],
          override: null,
          updated_at: null,
          updated_by: null,
        },
      );
      assert.ok(messages.every((message) => /^(candidate|room|phone|lti|email)\./.test(String(message.key))));
      const missing = await admin.client.v3('GET', '/institutes/:id/message_overrides', { id: instituteId });
      assert.equal(missing.status, 422, missing.text);
    });

    it('saves a wording with the same placeholders, shows it in the room’s view and removes it when emptied', async () => {
      const key = placeholderKey();
      const reference = catalogue('nl')[key] ?? '';
      const wording = `Eigen tekst: ${reference}`;
      const saved = await save(admin, { locale: 'nl', key, message: wording });
      assert.equal(saved.status, 200, saved.text);
      const message = object(object(saved.json, 'body').message, 'message');
      assert.equal(message.override, wording);
      assert.equal(message.updated_by, admin.id);

      const exam = await admin.client.v3('POST', '/exams', {
        name: 'Worded',
        type: 'classroom',
        duration_minutes: 5,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await admin.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Ada',
        email: 'ada-worded@example.org',
      });
      const token = object(object(student.json, 'body').student, 'student').token as string;
      const view = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      assert.deepEqual(object(view.json, 'body').message_overrides, { nl: { [key]: wording } });

      const removed = await save(admin, { locale: 'nl', key, message: '' });
      assert.equal(removed.status, 200, removed.text);
      assert.equal(object(object(removed.json, 'body').message, 'message').override, null);
      const after = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      assert.deepEqual(object(after.json, 'body').message_overrides, {});
    });

    it('refuses a wording whose placeholders differ, with the reason, and keys outside the candidate messages', async () => {
      const key = placeholderKey();
      const broken = 'Geen plaatshouder meer';
      const reason = messageMismatch(broken, catalogue('de')[key] ?? '');
      assert.ok(reason);
      const refused = await save(admin, { locale: 'de', key, message: broken });
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(refused.json, invalid('message', reason));
      const unreadable = await save(admin, { locale: 'de', key, message: 'Kaputt {' });
      assert.equal(unreadable.status, 422, unreadable.text);
      const consoleKey =
        Object.keys(catalogue('en')).find((name) => name.startsWith('console.')) ?? 'console.x';
      for (const other of [consoleKey, 'room.no.such.key']) {
        const answer = await save(admin, { locale: 'de', key: other, message: 'Text' });
        assert.deepEqual(answer.json, invalid('key', 'is not a message an institute may reword'));
      }
      const language = await save(admin, { locale: 'pt', key, message: 'Texto' });
      assert.deepEqual(language.json, invalid('locale', 'is not included in the list'));
    });

    it('is for the institute’s administrators only', async () => {
      const key = placeholderKey();
      const byTeacher = await save(teacher, { locale: 'nl', key, message: catalogue('nl')[key] ?? '' });
      assert.equal(byTeacher.status, 403, byTeacher.text);
      const byOther = await save(otherAdmin, { locale: 'nl', key, message: catalogue('nl')[key] ?? '' });
      assert.equal(byOther.status, 404, byOther.text);
      const listed = await teacher.client.v3('GET', '/institutes/:id/message_overrides', {
        id: instituteId,
        locale: 'nl',
      });
      assert.equal(listed.status, 403, listed.text);
    });
  });
}
