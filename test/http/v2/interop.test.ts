import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { type FilePart, SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
import { fetchAddress } from '../../helpers/files.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { v2Multipart } from '../../helpers/v2-multipart.ts';
import { object } from '../../helpers/json.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';

/** The JSON object under `key` of a successful answer with this status. */
function bodyOf(answer: HttpAnswer, status: number, key: string): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body')[key], key);
}

/** The array under `key` of a 200 answer. */
function listOf(answer: HttpAnswer, key: string): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body')[key];
  assert.ok(Array.isArray(list), `${key} is an array`);
  return list.map((item) => object(item, key));
}

function assertEmpty(answer: HttpAnswer, status: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.text, '');
}

const seconds = (iso: string) => Date.parse(iso) / 1000;

function pdf(field: string): FilePart {
  return { field, fileName: 'shared.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf };
}

for (const dialect of DIALECTS) {
  describe(`V2 and V3 over the same data [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { env: { PUBLIC_URL } });
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
    });

    after(async () => {
      await server.close();
    });

    async function v2Exam(name = 'Shared exam'): Promise<number> {
      const answer = await teacher.client.v2('POST', '/exams', {
        name,
        duration: 90,
        type: 'live_proctoring',
        start_time: seconds('2026-11-21T09:00:00Z'),
        end_time: seconds('2026-11-21T12:00:00Z'),
      });
      assert.equal(answer.status, 201, answer.text);
      return object(answer.json, 'body').id as number;
    }

    async function v3Exam(name = 'Shared exam'): Promise<number> {
      const answer = await teacher.client.v3('POST', '/exams', {
        name,
        type: 'classroom',
        duration_minutes: 30,
        start_time: '2026-12-01T08:00:00Z',
        end_time: '2026-12-01T10:00:00Z',
      });
      return bodyOf(answer, 201, 'exam').id as number;
    }

    describe('exams', () => {
      it('an exam created through V2 reads through V3 with V3 names and ISO times', async () => {
        const answer = await teacher.client.v2('POST', '/exams', {
          name: 'Made in V2',
          duration: 90,
          type: 'live_proctoring',
          start_time: seconds('2026-11-21T09:00:00Z'),
          end_time: seconds('2026-11-21T12:00:00Z'),
          upload_exam: true,
          restrictions: 'Line one\nLine <two>',
        });
        assert.equal(answer.status, 201, answer.text);
        const id = object(answer.json, 'body').id as number;
        const exam = bodyOf(await teacher.client.v3('GET', '/exams/:id', { id }), 200, 'exam');
        assert.equal(exam.id, id);
        assert.equal(exam.name, 'Made in V2');
        assert.equal(exam.type, 'live_proctoring');
        assert.equal(exam.duration_minutes, 90);
        assert.equal(exam.upload_answers, true);
        assert.equal(exam.start_time, '2026-11-21T09:00:00.000Z');
        assert.equal(exam.end_time, '2026-11-21T12:00:00.000Z');
        assert.equal(exam.restrictions, 'Line one\nLine <two>', 'V3 keeps the raw text');
        assert.equal(exam.user_id, teacher.id);
        assert.equal(exam.institute_id, instituteId);
      });

      it('an exam created through V3 reads through V2 with V2 names and epoch seconds', async () => {
        const id = await v3Exam('Made in V3');
        const exam = bodyOf(await teacher.client.v2('GET', '/exams/:id', { id }), 200, 'exam');
        assert.equal(exam.exam_id, id);
        assert.equal(exam.name, 'Made in V3');
        assert.equal(exam.duration, 30);
        assert.equal(exam.start_time, seconds('2026-12-01T08:00:00Z'));
        assert.equal(exam.end_time, seconds('2026-12-01T10:00:00Z'));
        assert.ok(
          listOf(await teacher.client.v2('GET', '/exams'), 'exams').some((listed) => listed.exam_id === id),
          'listed through V2',
        );
      });

      it('updates through either version show through the other', async () => {
        const id = await v2Exam();
        assertEmpty(
          await teacher.client.v2('POST', '/exams/:id', { id, name: 'Renamed in V2', duration: 20 }),
          200,
        );
        const v3 = bodyOf(await teacher.client.v3('GET', '/exams/:id', { id }), 200, 'exam');
        assert.equal(v3.name, 'Renamed in V2');
        assert.equal(v3.duration_minutes, 20);
        const patched = await teacher.client.v3('PATCH', '/exams/:id', { id, name: 'Renamed in V3' });
        assert.equal(patched.status, 200, patched.text);
        assert.equal(
          bodyOf(await teacher.client.v2('GET', '/exams/:id', { id }), 200, 'exam').name,
          'Renamed in V3',
        );
      });

      it('an exam destroyed through one version is gone from the other', async () => {
        const viaV2 = await v2Exam();
        assertEmpty(await teacher.client.v2('DELETE', '/exams/:id', { id: viaV2 }), 200);
        assert.equal((await teacher.client.v3('GET', '/exams/:id', { id: viaV2 })).status, 404);
        const viaV3 = await v3Exam();
        assert.equal((await teacher.client.v3('DELETE', '/exams/:id', { id: viaV3 })).status, 200);
        assertEmpty(await teacher.client.v2('GET', '/exams/:id', { id: viaV3 }), 404);
      });
    });

    describe('documents', () => {
      it('a document created through V2 is the V3 document of its exam, its text kept raw', async () => {
        const examId = await v2Exam();
        const text = 'Read <this>.\n\nThen start.';
        const created = await teacher.client.v2('POST', '/documents', {
          exam_id: examId,
          document_text: text,
        });
        assert.equal(created.status, 201, created.text);
        const id = object(created.json, 'body').id as number;
        const document = bodyOf(
          await teacher.client.v3('GET', '/exams/:exam_id/documents/:id', { exam_id: examId, id }),
          200,
          'document',
        );
        assert.equal(document.id, id);
        assert.equal(document.exam_id, examId);
        assert.equal(document.exam_content, text);
        const second = await teacher.client.v3('POST', '/exams/:exam_id/documents', {
          exam_id: examId,
          exam_content: 'A second one',
        });
        assert.equal(second.status, 422, second.text);
      });

      it('a document created through V3 reads through V2 as HTML, and V2 refuses a second one with 403', async () => {
        const examId = await v3Exam();
        const document = bodyOf(
          await teacher.client.v3('POST', '/exams/:exam_id/documents', {
            exam_id: examId,
            exam_content: 'Made in <V3>\nsecond line',
          }),
          201,
          'document',
        );
        assert.deepEqual(
          bodyOf(
            await teacher.client.v2('GET', '/documents/:id', { id: document.id as number }),
            200,
            'document',
          ),
          {
            document_id: document.id,
            exam_id: examId,
            document_text: '<p>Made in &lt;V3&gt;\n<br />second line</p>',
            has_attachments: false,
            user_id: teacher.id,
            institute_id: instituteId,
          },
        );
        assert.ok(
          listOf(await teacher.client.v2('GET', '/documents'), 'documents').some(
            (d) => d.document_id === document.id,
          ),
          'listed through V2',
        );
        assertEmpty(
          await teacher.client.v2('POST', '/documents', { exam_id: examId, document_text: 'Again' }),
          403,
        );
      });

      it('an update through V2 is the V3 exam_content, and a V3 destroy is a V2 404', async () => {
        const examId = await v3Exam();
        const document = bodyOf(
          await teacher.client.v3('POST', '/exams/:exam_id/documents', {
            exam_id: examId,
            exam_content: 'Before',
          }),
          201,
          'document',
        );
        const id = document.id as number;
        assertEmpty(await teacher.client.v2('POST', '/documents/:id', { id, document_text: 'After' }), 200);
        const shown = bodyOf(
          await teacher.client.v3('GET', '/exams/:exam_id/documents/:id', { exam_id: examId, id }),
          200,
          'document',
        );
        assert.equal(shown.exam_content, 'After');
        assert.equal(
          (await teacher.client.v3('DELETE', '/exams/:exam_id/documents/:id', { exam_id: examId, id }))
            .status,
          200,
        );
        assertEmpty(await teacher.client.v2('GET', '/documents/:id', { id }), 404);
      });
    });

    describe('attachments', () => {
      it('an attachment added through V2 is listed and shown through V3, same id and placeholder', async () => {
        const examId = await v2Exam();
        const created = await teacher.client.v2('POST', '/documents', {
          exam_id: examId,
          document_text: 'Files',
        });
        const documentId = object(created.json, 'body').id as number;
        const added = bodyOf(
          await v2Multipart(teacher.client, 'POST', '/documents/:id/add_attachment', { id: documentId }, [
            pdf('file'),
          ]),
          200,
          'attachment',
        );
        const listed = listOf(
          await teacher.client.v3('GET', '/exams/:exam_id/attachments', { exam_id: examId }),
          'attachments',
        );
        assert.deepEqual(
          listed.map((a) => [a.id, a.placeholder, a.document_id, a.exam_id, a.file_name]),
          [[added.attachment_id, added.placeholder, documentId, examId, 'shared.pdf']],
        );
        const shown = bodyOf(
          await teacher.client.v3('GET', '/exams/:exam_id/attachments/:id', {
            exam_id: examId,
            id: added.attachment_id as number,
          }),
          200,
          'attachment',
        );
        const download = await fetchAddress(server, String(shown.url));
        assert.equal(download.status, 200, download.text);
        assert.ok(download.bytes.equals(SAMPLE.pdf));
      });

      it('an attachment added through V3 is listed through V2, and a V2 destroy removes it and its placeholder for V3', async () => {
        const examId = await v3Exam();
        const added = bodyOf(
          await v3Multipart(teacher.client, 'POST', '/exams/:exam_id/attachments', { exam_id: examId }, [
            pdf('document'),
          ]),
          201,
          'attachment',
        );
        const documentId = added.document_id as number;
        const patched = await teacher.client.v3('PATCH', '/exams/:exam_id/documents/:id', {
          exam_id: examId,
          id: documentId,
          exam_content: `See ${String(added.placeholder)}.`,
        });
        assert.equal(patched.status, 200, patched.text);
        const listed = listOf(
          await teacher.client.v2('GET', '/documents/:id/attachments_list', { id: documentId }),
          'attachments',
        );
        assert.deepEqual(
          listed.map((a) => [a.attachment_id, a.placeholder, a.exam_id, a.document_id]),
          [[added.id, added.placeholder, examId, documentId]],
        );
        assertEmpty(
          await teacher.client.v2('DELETE', '/documents/:id/destroy_attachment', {
            id: documentId,
            attachment_id: added.id as number,
          }),
          200,
        );
        assert.deepEqual(
          listOf(
            await teacher.client.v3('GET', '/exams/:exam_id/attachments', { exam_id: examId }),
            'attachments',
          ),
          [],
        );
        const document = bodyOf(
          await teacher.client.v3('GET', '/exams/:exam_id/documents/:id', {
            exam_id: examId,
            id: documentId,
          }),
          200,
          'document',
        );
        assert.equal(document.exam_content, 'See .');
      });
    });

    describe('students', () => {
      it('a student added through V2 is the V3 session whose id is student_id', async () => {
        const examId = await v2Exam();
        const openTime = seconds('2026-11-21T09:30:00Z');
        const record = bodyOf(
          await teacher.client.v2('POST', '/exams/:id/add_student', {
            id: examId,
            name: 'Grace',
            email: 'grace@example.org',
            use_duration: false,
            open_time: openTime,
            individual_info: '<p>Desk 9</p>',
            is_individual_info_html: true,
          }),
          200,
          'student_session',
        );
        const student = bodyOf(
          await teacher.client.v3('GET', '/student_sessions/:id', { id: record.student_id as number }),
          200,
          'student',
        );
        assert.equal(student.id, record.student_id);
        assert.equal(student.exam_id, examId);
        assert.equal(student.name, 'Grace');
        assert.equal(student.email, 'grace@example.org');
        assert.equal(student.token, record.token);
        assert.equal(student.use_duration, false);
        assert.equal(student.open_time, '2026-11-21T09:30:00.000Z');
        assert.equal(student.individual_info, '<p>Desk 9</p>');
        assert.equal(student.is_individual_info_html, true);
        assert.equal(student.status, 'registered');
        const listed = listOf(
          await teacher.client.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId }),
          'students',
        );
        assert.deepEqual(
          listed.map((s) => s.id),
          [record.student_id],
        );
      });

      it('a student created through V3 shows through V2, and V2 delete_student removes it for V3', async () => {
        const examId = await v3Exam();
        const student = bodyOf(
          await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
            exam_id: examId,
            name: 'Alan',
            email: 'alan@example.org',
            open_time: '2026-12-01T08:15:00Z',
          }),
          201,
          'student',
        );
        const shown = listOf(
          await teacher.client.v2('GET', '/exams/:id/show_students', { id: examId }),
          'student_session',
        );
        assert.deepEqual(shown, [
          {
            student_id: student.id,
            name: 'Alan',
            email: 'alan@example.org',
            attempt: 0,
            exam_id: examId,
            status: 'registered',
            individual_info: null,
            is_individual_info_html: false,
            open_time: seconds('2026-12-01T08:15:00Z'),
            start_time: null,
            end_time: null,
            token: student.token,
          },
        ]);
        const duplicate = await teacher.client.v2('POST', '/exams/:id/add_student', {
          id: examId,
          name: 'Alan',
          email: 'alan@example.org',
        });
        assert.equal(duplicate.status, 400, duplicate.text);
        assert.deepEqual(duplicate.json, { errors: { email: ['has already been taken'] } });
        assertEmpty(
          await teacher.client.v2('DELETE', '/exams/:id/delete_student', {
            id: examId,
            student_session_id: student.id as number,
          }),
          200,
        );
        assert.equal(
          (await teacher.client.v3('GET', '/student_sessions/:id', { id: student.id as number })).status,
          404,
        );
      });

      it('a V3 update of a student shows through V2 show_students', async () => {
        const examId = await v2Exam();
        const record = bodyOf(
          await teacher.client.v2('POST', '/exams/:id/add_student', {
            id: examId,
            name: 'Old',
            email: 'old@example.org',
          }),
          200,
          'student_session',
        );
        const patched = await teacher.client.v3('PATCH', '/student_sessions/:id', {
          id: record.student_id as number,
          name: 'New',
          individual_info: 'Bring a pen',
        });
        assert.equal(patched.status, 200, patched.text);
        assert.deepEqual(
          listOf(
            await teacher.client.v2('GET', '/exams/:id/show_students', { id: examId }),
            'student_session',
          ),
          [{ ...record, name: 'New', individual_info: 'Bring a pen' }],
        );
      });
    });
  });
}
