/**
 * Who reads which language (docs/languages.md, "How the language is chosen"), through real HTTP: the
 * student's `language` on V3 and V2, an exam's `candidate_languages`, the candidate's own pick in
 * the room and on the phone, the order the room view resolves the language in, and the pages the
 * server writes (`<html lang dir>`, the PIN page in the browser's language).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { invalid } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const EVERY_LANGUAGE = ['en', 'nl', 'de', 'fr', 'es', 'it', 'ar'];

for (const dialect of DIALECTS) {
  describe(`candidate languages [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;
    /** An exam of an institute whose default language is French. */
    let frenchInstituteExam: number;
    let frenchOwner: TestUser;
    let openExam: number;
    let phoneExam: number;

    before(async () => {
      server = await startTestServer(dialect, { env: { PUBLIC_URL, PSEUDO_LOCALE: 'true' } });
      owner = await server.user(await server.institute(), 'teacher');
      openExam = await createExam(owner, { name: 'Every language', type: 'classroom', duration_minutes: 30 });
      phoneExam = await createExam(owner, {
        name: 'With a phone',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        mobile_cam: true,
      });
      const french = await server.app.services.institutes.create({
        name: 'Institut',
        short_name: 'IF',
        default_language: 'fr',
      });
      frenchOwner = await server.user(french.id, 'teacher');
      frenchInstituteExam = await createExam(frenchOwner, {
        name: 'Examen',
        type: 'classroom',
        duration_minutes: 30,
      });
    });

    after(async () => {
      await server.close();
    });

    async function createExam(user: TestUser, params: Record<string, Scalar>): Promise<number> {
      const answer = await user.client.v3('POST', '/exams', params);
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    let students = 0;
    async function createStudent(
      examId: number,
      extra: Record<string, Scalar> = {},
      user: TestUser = owner,
    ): Promise<Json> {
      students += 1;
      const answer = await user.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `candidate${students}@example.org`,
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    function room(token: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
      return httpRequest({ url: `${server.baseUrl}/api/room/${token}`, headers });
    }

    function pick(scope: 'room' | 'mobile', token: string, body: unknown): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/${scope}/${token}/language`,
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    }

    function languageOf(answer: HttpAnswer): Json {
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').language, 'language');
    }

    async function currentOf(token: string, headers: Record<string, string> = {}): Promise<unknown> {
      return languageOf(await room(token, headers)).current;
    }

    describe('the student’s language (V3 and V2)', () => {
      it('is set on create in canonical case, shown, changed on update and cleared with null', async () => {
        const student = await createStudent(openExam, { language: 'DE-ch' });
        assert.equal(student.language, 'de-CH');
        assert.equal(student.chosen_language, null);
        const id = student.id as number;
        const shown = await owner.client.v3('GET', '/student_sessions/:id', { id });
        assert.equal(object(object(shown.json, 'body').student, 'student').language, 'de-CH');
        const changed = await owner.client.v3('PATCH', '/student_sessions/:id', { id, language: 'ar' });
        assert.equal(changed.status, 200, changed.text);
        assert.equal(object(object(changed.json, 'body').student, 'student').language, 'ar');
        const cleared = await owner.client.v3('PATCH', '/student_sessions/:id', { id, language: null });
        assert.equal(object(object(cleared.json, 'body').student, 'student').language, null);
        assert.equal((await createStudent(openExam)).language, null);
      });

      it('answers 422 for a malformed tag and for a language the service does not speak', async () => {
        for (const [value, detail] of [
          ['not a tag', 'is not a valid language tag'],
          ['pt-BR', 'is not included in the list'],
        ] as const) {
          const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
            exam_id: openExam,
            name: 'Bad',
            email: 'bad-language@example.org',
            language: value,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('language', detail));
        }
      });

      it('is read from an import’s language column, by the same rule', async () => {
        const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions/import', {
          exam_id: openExam,
          students: JSON.stringify([
            { name: 'Imported', email: 'imported-language@example.org', language: 'ar' },
            { name: 'Unset', email: 'imported-unset@example.org', language: '' },
          ]),
        });
        assert.equal(answer.status, 201, answer.text);
        const sessions = object(answer.json, 'body').students as Json[];
        assert.deepEqual(
          sessions.map((session) => session.language),
          ['ar', null],
        );
        const refused = await owner.client.v3('POST', '/exams/:exam_id/student_sessions/import', {
          exam_id: openExam,
          students: JSON.stringify([{ name: 'Bad', email: 'imported-bad@example.org', language: 'xx' }]),
        });
        assert.equal(refused.status, 422, refused.text);
        assert.deepEqual(object(refused.json, 'body').row_errors, [
          { row: 1, field: 'language', message: 'is not included in the list' },
        ]);
      });

      it('is taken by V2 add_student as an extra field', async () => {
        const answer = await owner.client.v2('POST', '/exams/:id/add_student', {
          id: openExam,
          name: 'Via V2',
          email: 'v2-language@example.org',
          language: 'nl',
        });
        assert.equal(answer.status, 200, answer.text);
        const id = object(object(answer.json, 'body').student_session, 'student_session').student_id;
        const shown = await owner.client.v3('GET', '/student_sessions/:id', { id: id as number });
        assert.equal(object(object(shown.json, 'body').student, 'student').language, 'nl');
        const refused = await owner.client.v2('POST', '/exams/:id/add_student', {
          id: openExam,
          name: 'Via V2',
          email: 'v2-bad-language@example.org',
          language: 'klingon!',
        });
        assert.equal(refused.status, 400, refused.text);
      });
    });

    describe('an exam’s candidate_languages', () => {
      it('is null (every language) by default, set from a list and shown in canonical form', async () => {
        const created = await owner.client.v3('POST', '/exams', {
          name: 'Two languages',
          type: 'classroom',
          duration_minutes: 30,
          candidate_languages: 'NL, en',
        });
        assert.equal(created.status, 201, created.text);
        const exam = object(object(created.json, 'body').exam, 'exam');
        assert.deepEqual(exam.candidate_languages, ['nl', 'en']);
        const shown = await owner.client.v3('GET', '/exams/:id', { id: exam.id as number });
        assert.deepEqual(object(object(shown.json, 'body').exam, 'exam').candidate_languages, ['nl', 'en']);
        const cleared = await owner.client.v3('PATCH', '/exams/:id', {
          id: exam.id as number,
          candidate_languages: null,
        });
        assert.equal(object(object(cleared.json, 'body').exam, 'exam').candidate_languages, null);
      });

      it('answers 422 for an unsupported, malformed or repeated language', async () => {
        for (const [value, detail] of [
          ['en,pt', 'is not included in the list'],
          ['en,!!', 'is not a valid language tag'],
          ['de,de-CH', 'must not name a language twice'],
        ] as const) {
          const answer = await owner.client.v3('PATCH', '/exams/:id', {
            id: openExam,
            candidate_languages: value,
          });
          assert.equal(answer.status, 422, `${value}: ${answer.text}`);
          assert.deepEqual(answer.json, invalid('candidate_languages', detail));
        }
      });
    });

    describe('PUT /api/room/:token/language', () => {
      it('remembers the pick for the session: the room view, the V3 record and the page follow it', async () => {
        const student = await createStudent(openExam, { language: 'de' });
        const token = student.token as string;
        const answer = await pick('room', token, { language: 'nl' });
        assert.deepEqual(languageOf(answer), { current: 'nl', available: [...EVERY_LANGUAGE, 'en-XA'] });
        assert.equal(await currentOf(token), 'nl');
        const shown = await owner.client.v3('GET', '/student_sessions/:id', { id: student.id as number });
        assert.equal(object(object(shown.json, 'body').student, 'student').chosen_language, 'nl');
        const page = await httpRequest({ url: `${server.baseUrl}/room/${token}` });
        assert.match(page.text, /<html lang="nl" dir="ltr">/);
        // The pseudo-locale, offered because PSEUDO_LOCALE is on.
        assert.equal(languageOf(await pick('room', token, { language: 'en-XA' })).current, 'en-XA');
      });

      it('refuses a language the exam does not offer, a bad body and an unknown token', async () => {
        const limited = await createExam(owner, {
          name: 'Dutch or English',
          type: 'classroom',
          duration_minutes: 30,
          candidate_languages: 'nl,en',
        });
        const token = (await createStudent(limited)).token as string;
        const refused = await pick('room', token, { language: 'de' });
        assert.equal(refused.status, 422, refused.text);
        assert.deepEqual(refused.json, invalid('language', 'is not offered for this exam'));
        const blank = await pick('room', token, {});
        assert.deepEqual([blank.status, blank.json], [422, invalid('language', "can't be blank")]);
        const malformed = await pick('room', token, { language: '<b>' });
        assert.deepEqual(
          [malformed.status, malformed.json],
          [422, invalid('language', 'is not a valid language tag')],
        );
        const notText = await pick('room', token, { language: ['nl'] });
        assert.equal(notText.status, 422, notText.text);
        const unknown = await pick('room', 'f'.repeat(32), { language: 'nl' });
        assert.deepEqual([unknown.status, unknown.json], [404, { error: "Couldn't find the exam room" }]);
        assert.deepEqual(languageOf(await room(token)), { current: 'en', available: ['en', 'nl', 'en-XA'] });
      });
    });

    describe('the room view’s language.current, rung by rung', () => {
      it('takes the pick, then the student, the exam, the institute, Accept-Language, and English', async () => {
        const accept = { 'accept-language': 'it-IT, es;q=0.8' };
        const bare = await createStudent(frenchInstituteExam, {}, frenchOwner);
        // The exam took the institute's language when it was made: set it apart to see each rung.
        const exam = await frenchOwner.client.v3('PATCH', '/exams/:id', {
          id: frenchInstituteExam,
          exam_language: 'es',
        });
        assert.equal(exam.status, 200, exam.text);
        assert.equal(await currentOf(bare.token as string, accept), 'es', 'the exam');
        const student = await createStudent(frenchInstituteExam, { language: 'de' }, frenchOwner);
        assert.equal(await currentOf(student.token as string, accept), 'de', 'the student');
        await pick('room', student.token as string, { language: 'ar' });
        assert.deepEqual(languageOf(await room(student.token as string, accept)).current, 'ar', 'the pick');
        // Without the exam's language in the allowed list, the institute's comes next.
        await frenchOwner.client.v3('PATCH', '/exams/:id', {
          id: frenchInstituteExam,
          candidate_languages: 'fr,it',
        });
        assert.equal(await currentOf(bare.token as string, accept), 'fr', 'the institute');
        // Neither the exam's nor the institute's allowed: the browser's first allowed language.
        await frenchOwner.client.v3('PATCH', '/exams/:id', {
          id: frenchInstituteExam,
          candidate_languages: 'it,en',
        });
        assert.equal(await currentOf(bare.token as string, accept), 'it', 'Accept-Language');
        assert.equal(await currentOf(bare.token as string), 'en', 'English');
        await frenchOwner.client.v3('PATCH', '/exams/:id', {
          id: frenchInstituteExam,
          candidate_languages: 'nl',
        });
        assert.equal(await currentOf(bare.token as string), 'nl', 'the only language allowed');
        await frenchOwner.client.v3('PATCH', '/exams/:id', {
          id: frenchInstituteExam,
          candidate_languages: null,
        });
      });
    });

    describe('the phone', () => {
      it('shows the language in its view and stores its pick on the same session', async () => {
        const student = await createStudent(phoneExam, { language: 'fr' });
        const mobile = object(object((await room(student.token as string)).json, 'body').mobile, 'mobile');
        const phoneToken = String(mobile.pairing_url).split('/').pop() ?? '';
        const view = await httpRequest({ url: `${server.baseUrl}/api/mobile/${phoneToken}` });
        assert.equal(languageOf(view).current, 'fr');
        const picked = await pick('mobile', phoneToken, { language: 'it' });
        assert.equal(languageOf(picked).current, 'it');
        assert.equal(await currentOf(student.token as string), 'it', 'the room follows the phone’s pick');
        const refused = await pick('mobile', phoneToken, { language: 'pt' });
        assert.deepEqual(
          [refused.status, refused.json],
          [422, invalid('language', 'is not offered for this exam')],
        );
        const unknown = await pick('mobile', 'e'.repeat(32), { language: 'nl' });
        assert.equal(unknown.status, 404, unknown.text);
        const page = await httpRequest({ url: `${server.baseUrl}/m/${phoneToken}` });
        assert.match(page.text, /<html lang="it" dir="ltr">/);
        assert.match(page.text, /<title>With a phone · videocamera del telefono<\/title>/);
      });
    });

    describe('the pages the server writes', () => {
      it('opens the room in the student’s language, right to left for Arabic, and takes ?lang= for one load', async () => {
        const dutch = await createStudent(openExam, { language: 'nl' });
        const page = await httpRequest({ url: `${server.baseUrl}/room/${dutch.token as string}` });
        assert.equal(page.status, 200);
        assert.match(page.text, /<html lang="nl" dir="ltr">/);
        assert.match(page.text, /Uw examenruimte wordt geopend…/);
        const arabic = await createStudent(openExam, { language: 'ar' });
        const rtl = await httpRequest({ url: `${server.baseUrl}/room/${arabic.token as string}` });
        assert.match(rtl.text, /<html lang="ar" dir="rtl">/);
        const once = await httpRequest({ url: `${server.baseUrl}/room/${arabic.token as string}?lang=de` });
        assert.match(once.text, /<html lang="de" dir="ltr">/);
        const ignored = await httpRequest({
          url: `${server.baseUrl}/room/${arabic.token as string}?lang=pt`,
        });
        assert.match(ignored.text, /<html lang="ar" dir="rtl">/);
        assert.equal(await currentOf(arabic.token as string), 'ar', 'a ?lang= is not remembered');
      });

      it('writes the not-found pages and the PIN page in the browser’s language', async () => {
        const german = { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' };
        const pin = await httpRequest({ url: `${server.baseUrl}/m`, headers: german });
        assert.equal(pin.status, 200);
        assert.match(pin.text, /<html lang="de" dir="ltr">/);
        assert.match(pin.text, /<title>Ihr Smartphone verbinden<\/title>/);
        assert.match(pin.text, /<label for="email">E-Mail-Adresse<\/label>/);
        const wrong = await httpRequest({
          url: `${server.baseUrl}/m`,
          method: 'POST',
          headers: { ...german, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ pin: '', email: 'nobody@example.org' }).toString(),
        });
        assert.equal(wrong.status, 422);
        assert.match(wrong.text, /Geben Sie die sechsstellige PIN ein/);
        const arabicPin = await httpRequest({ url: `${server.baseUrl}/m?lang=ar` });
        assert.match(arabicPin.text, /<html lang="ar" dir="rtl">/);
        assert.match(arabicPin.text, /action="\/m\?lang=ar"/);
        const room404 = await httpRequest({
          url: `${server.baseUrl}/room/${'0'.repeat(32)}`,
          headers: german,
        });
        assert.equal(room404.status, 404);
        assert.match(room404.text, /<h1>Prüfungsraum nicht gefunden<\/h1>/);
        const phone404 = await httpRequest({ url: `${server.baseUrl}/m/${'0'.repeat(32)}?lang=es` });
        assert.equal(phone404.status, 404);
        assert.match(phone404.text, /<a href="\/m">conectarse con el PIN<\/a>/);
      });
    });
  });
}
