import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import { assertNotStored, assertStored, fetchAddress, onS3 } from '../../helpers/files.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const DOCUMENT_FIELDS = ['id', 'exam_id', 'exam_content', 'attachments_count', 'created_at', 'updated_at'];
const TAKEN = {
  error: "'exam_id':['has already been taken']",
  errors: { exam_id: ['has already been taken'] },
};

function documentIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').document, 'document');
}

function documentsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').documents;
  assert.ok(Array.isArray(list), 'documents is an array');
  return list.map((item) => object(item, 'document'));
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

for (const dialect of DIALECTS) {
  describe(`V3 documents [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let otherTeacher: TestUser;
    let admin: TestUser;
    let auditor: TestUser;
    let proctor: TestUser;
    let outsideAdmin: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      // s3rver judges presigned addresses by the real time: start from it, not from when the file loaded.
      if (onS3(server)) clock.current = Math.floor(Date.now() / 1000) * 1000;
      const home = await server.institute();
      const elsewhere = await server.institute();
      owner = await server.user(home, 'teacher');
      otherTeacher = await server.user(home, 'teacher');
      admin = await server.user(home, 'administrator');
      auditor = await server.user(home, 'auditor');
      proctor = await server.user(home, 'proctor');
      outsideAdmin = await server.user(elsewhere, 'administrator');
    });

    after(async () => {
      await server.close();
    });

    async function createExam(user: TestUser = owner): Promise<number> {
      const answer = await user.client.v3('POST', '/exams', {
        name: 'Exam with instructions',
        type: 'classroom',
        duration_minutes: 60,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    function create(
      user: TestUser,
      examId: Scalar,
      params: Record<string, Scalar> = {},
    ): Promise<HttpAnswer> {
      return user.client.v3('POST', '/exams/:exam_id/documents', { exam_id: examId, ...params });
    }

    async function createDocument(examId: number, content = 'Read every question twice.'): Promise<Json> {
      const answer = await create(owner, examId, { exam_content: content });
      assert.equal(answer.status, 201, answer.text);
      return documentIn(answer);
    }

    function show(user: TestUser, examId: Scalar, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('GET', '/exams/:exam_id/documents/:id', { exam_id: examId, id });
    }

    function list(user: TestUser, examId: Scalar, params: Record<string, Scalar> = {}): Promise<HttpAnswer> {
      return user.client.v3('GET', '/exams/:exam_id/documents', { exam_id: examId, ...params });
    }

    async function countRows(table: 'files' | 'attachments' | 'documents'): Promise<number> {
      const row = await server.app.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    describe('POST /api/v3/exams/:exam_id/documents', () => {
      it('answers 201 with the document record', async () => {
        const examId = await createExam();
        const answer = await create(owner, examId, { exam_content: 'Answer in <b>ink</b>.\nNo phones.' });
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['document']);
        const document = documentIn(answer);
        assert.deepEqual(Object.keys(document), DOCUMENT_FIELDS);
        assert.ok(Number.isInteger(document.id) && (document.id as number) > 0);
        assert.equal(document.exam_id, examId);
        assert.equal(document.exam_content, 'Answer in <b>ink</b>.\nNo phones.');
        assert.equal(document.attachments_count, 0);
        assert.equal(document.created_at, new Date(clock.now()).toISOString());
        assert.equal(document.updated_at, document.created_at);
        assert.deepEqual(documentIn(await show(owner, examId, document.id as number)), document);
      });

      it('accepts a form-encoded body', async () => {
        const examId = await createExam();
        const answer = await owner.client.v3(
          'POST',
          '/exams/:exam_id/documents',
          { exam_id: examId, exam_content: 'Calculators allowed & pens: "blue"' },
          { as: 'form' },
        );
        assert.equal(answer.status, 201, answer.text);
        assert.equal(documentIn(answer).exam_content, 'Calculators allowed & pens: "blue"');
      });

      it("answers 422 'exam_id':['has already been taken'] for a second document of the same exam", async () => {
        const examId = await createExam();
        const first = await createDocument(examId, 'First');
        assertAnswer(await create(owner, examId, { exam_content: 'Second' }), 422, TAKEN);
        assert.deepEqual(documentsIn(await list(owner, examId)), [first]);
      });

      for (const [label, params] of [
        ['missing', {}],
        ['empty', { exam_content: '' }],
        ['blank', { exam_content: '  \n ' }],
        ['null', { exam_content: null }],
      ] as const) {
        it(`answers 422 naming exam_content when it is ${label}, creating nothing`, async () => {
          const examId = await createExam();
          assertAnswer(await create(owner, examId, params), 422, missing('exam_content'));
          assert.deepEqual(documentsIn(await list(owner, examId)), []);
        });
      }

      it('answers 404 naming the exam for an unknown, a non-numeric and a deleted exam', async () => {
        assertAnswer(await create(owner, 999999, { exam_content: 'x' }), 404, notFound('Exam', 999999));
        assertAnswer(await create(owner, 'abc', { exam_content: 'x' }), 404, notFound('Exam', 'abc'));
        const examId = await createExam();
        const gone = await owner.client.v3('DELETE', '/exams/:id', { id: examId });
        assert.equal(gone.status, 200, gone.text);
        assertAnswer(await create(owner, examId, { exam_content: 'x' }), 404, notFound('Exam', examId));
      });

      it('answers 403 to an auditor and a proctor of the institute, creating nothing', async () => {
        const examId = await createExam();
        for (const user of [auditor, proctor]) {
          assertAnswer(await create(user, examId, { exam_content: 'Mine' }), 403, NOT_AUTHORIZED);
        }
        assert.deepEqual(documentsIn(await list(owner, examId)), []);
      });

      it("answers a teacher not owning the exam and another institute's administrator as if the exam did not exist", async () => {
        const examId = await createExam();
        for (const user of [otherTeacher, outsideAdmin]) {
          assertAnswer(await create(user, examId, { exam_content: 'Mine' }), 404, notFound('Exam', examId));
        }
        assert.deepEqual(documentsIn(await list(owner, examId)), []);
      });

      it("lets an administrator of the institute create a teacher's exam document", async () => {
        const examId = await createExam();
        const answer = await create(admin, examId, { exam_content: 'Set by the administrator' });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(documentIn(answer).exam_id, examId);
      });
    });

    describe('GET /api/v3/exams/:exam_id/documents', () => {
      it("lists the exam's document with the pagination headers", async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const answer = await list(owner, examId);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['documents']);
        assert.deepEqual(documentsIn(answer), [document]);
        assert.equal(answer.headers['x-pagination-item-count'], '1');
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '300');
      });

      it('answers an empty list for an exam without a document', async () => {
        const examId = await createExam();
        const answer = await list(owner, examId);
        assert.deepEqual(documentsIn(answer), []);
        assert.equal(answer.headers['x-pagination-item-count'], '0');
        assert.equal(answer.headers['x-pagination-page-count'], '0');
      });

      it('filters on id, created_at and updated_at and pages', async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const id = document.id as number;
        const filtered = (filter: unknown, extra: Record<string, Scalar> = {}) =>
          list(owner, examId, { filter: JSON.stringify(filter), ...extra });
        assert.deepEqual(documentsIn(await filtered({ id: { eq: id } })), [document]);
        assert.deepEqual(documentsIn(await filtered({ id: { not_eq: id } })), []);
        assert.deepEqual(documentsIn(await filtered({ created_at: { gte: document.created_at } })), [
          document,
        ]);
        assert.deepEqual(documentsIn(await filtered({ updated_at: { gt: document.updated_at } })), []);
        const sorted = await list(owner, examId, { sort: JSON.stringify([{ updated_at: 'desc' }]) });
        assert.deepEqual(documentsIn(sorted), [document]);
        const secondPage = await list(owner, examId, { page: 2, limit: 1 });
        assert.deepEqual(documentsIn(secondPage), []);
        assert.equal(secondPage.headers['x-pagination-item-count'], '1');
        assert.equal(secondPage.headers['x-pagination-page'], '2');
      });

      it('answers 422 naming a field that is not filterable or sortable', async () => {
        const examId = await createExam();
        const byContent = await list(owner, examId, {
          filter: JSON.stringify({ exam_content: { eq: 'x' } }),
        });
        assert.equal(byContent.status, 422, byContent.text);
        assert.match(String(object(byContent.json, 'body').error), /exam_content/);
        const sortedBy = await list(owner, examId, { sort: JSON.stringify([{ colour: 'asc' }]) });
        assert.equal(sortedBy.status, 422, sortedBy.text);
        assert.match(String(object(sortedBy.json, 'body').error), /colour/);
      });

      it('lets an auditor and a proctor of the institute list', async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        for (const user of [auditor, proctor, admin])
          assert.deepEqual(documentsIn(await list(user, examId)), [document]);
      });

      it("answers a teacher not owning the exam and another institute's administrator with the exam's 404", async () => {
        const examId = await createExam();
        await createDocument(examId);
        for (const user of [otherTeacher, outsideAdmin]) {
          assertAnswer(await list(user, examId), 404, notFound('Exam', examId));
        }
        assertAnswer(await list(owner, 999999), 404, notFound('Exam', 999999));
      });
    });

    describe('GET /api/v3/exams/:exam_id/documents/:id', () => {
      let examId: number;
      let document: Json;
      let otherExamDocument: Json;

      before(async () => {
        examId = await createExam();
        document = await createDocument(examId, 'Shown');
        otherExamDocument = await createDocument(await createExam(), 'Elsewhere');
      });

      it('shows the document', async () => {
        const answer = await show(owner, examId, document.id as number);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['document']);
        assert.deepEqual(documentIn(answer), document);
      });

      it('lets an auditor and a proctor of the institute read it', async () => {
        for (const user of [auditor, proctor]) {
          assert.deepEqual(documentIn(await show(user, examId, document.id as number)), document);
        }
      });

      it("answers 404 Couldn't find Document for an unknown id, a non-numeric id and another exam's document", async () => {
        assertAnswer(await show(owner, examId, 999999), 404, notFound('Document', 999999));
        assertAnswer(await show(owner, examId, 'abc'), 404, notFound('Document', 'abc'));
        const foreign = otherExamDocument.id as number;
        assertAnswer(await show(owner, examId, foreign), 404, notFound('Document', foreign));
      });

      it('answers an out-of-scope caller exactly as an unknown exam', async () => {
        for (const user of [otherTeacher, outsideAdmin]) {
          const hidden = await show(user, examId, document.id as number);
          assert.equal(hidden.status, 404);
          assert.equal(hidden.text, JSON.stringify(notFound('Exam', examId)));
        }
        const unknown = await show(outsideAdmin, 999999, document.id as number);
        assert.equal(unknown.text, JSON.stringify(notFound('Exam', 999999)));
      });
    });

    for (const method of ['PATCH', 'PUT'] as const) {
      describe(`${method} /api/v3/exams/:exam_id/documents/:id`, () => {
        function update(user: TestUser, examId: Scalar, id: Scalar, params: Record<string, Scalar>) {
          return user.client.v3(method, '/exams/:exam_id/documents/:id', { exam_id: examId, id, ...params });
        }

        it('replaces exam_content and moves updated_at only', async () => {
          const examId = await createExam();
          const document = await createDocument(examId, 'Before');
          clock.current += 5_000;
          const answer = await update(owner, examId, document.id as number, { exam_content: 'After' });
          assert.equal(answer.status, 200, answer.text);
          const updated = documentIn(answer);
          assert.deepEqual(updated, {
            ...document,
            exam_content: 'After',
            updated_at: new Date(clock.now()).toISOString(),
          });
          assert.deepEqual(documentIn(await show(owner, examId, document.id as number)), updated);
        });

        for (const [label, params] of [
          ['missing', {}],
          ['empty', { exam_content: '' }],
          ['blank', { exam_content: ' ' }],
        ] as const) {
          it(`answers 422 naming exam_content when it is ${label}, changing nothing`, async () => {
            const examId = await createExam();
            const document = await createDocument(examId, 'Kept');
            assertAnswer(
              await update(owner, examId, document.id as number, params),
              422,
              missing('exam_content'),
            );
            assert.deepEqual(documentIn(await show(owner, examId, document.id as number)), document);
          });
        }

        it("answers 404 Couldn't find Document for an unknown id and another exam's document", async () => {
          const examId = await createExam();
          await createDocument(examId);
          const foreign = await createDocument(await createExam(), 'Not yours');
          assertAnswer(
            await update(owner, examId, 999999, { exam_content: 'x' }),
            404,
            notFound('Document', 999999),
          );
          assertAnswer(
            await update(owner, examId, foreign.id as number, { exam_content: 'x' }),
            404,
            notFound('Document', foreign.id as number),
          );
          assert.equal(
            documentIn(await show(owner, foreign.exam_id as number, foreign.id as number)).exam_content,
            'Not yours',
          );
        });

        it('answers 403 to an auditor and a proctor, and 404 to callers who cannot see the exam', async () => {
          const examId = await createExam();
          const document = await createDocument(examId, 'Untouched');
          const id = document.id as number;
          for (const user of [auditor, proctor]) {
            assertAnswer(await update(user, examId, id, { exam_content: 'x' }), 403, NOT_AUTHORIZED);
          }
          for (const user of [otherTeacher, outsideAdmin]) {
            assertAnswer(
              await update(user, examId, id, { exam_content: 'x' }),
              404,
              notFound('Exam', examId),
            );
          }
          assert.deepEqual(documentIn(await show(owner, examId, id)), document);
        });
      });
    }

    describe('DELETE /api/v3/exams/:exam_id/documents/:id', () => {
      function destroy(user: TestUser, examId: Scalar, id: Scalar): Promise<HttpAnswer> {
        return user.client.v3('DELETE', '/exams/:exam_id/documents/:id', { exam_id: examId, id });
      }

      it('answers 200 {} and destroys the document with its attachments and their stored files', async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const urls: string[] = [];
        const uploads = [
          ['rules.pdf', SAMPLE.pdf],
          ['map.png', SAMPLE.png],
        ] as const;
        for (const [fileName, bytes] of uploads) {
          const answer = await v3Multipart(
            owner.client,
            'POST',
            '/exams/:exam_id/documents/:document_id/attachments',
            { exam_id: examId, document_id: document.id as number },
            [{ field: 'document', fileName, contentType: 'application/octet-stream', bytes }],
          );
          assert.equal(answer.status, 201, answer.text);
          urls.push(String(object(object(answer.json, 'body').attachment, 'attachment').url));
        }
        assert.equal(documentIn(await show(owner, examId, document.id as number)).attachments_count, 2);
        const rows = await server.app.database.db
          .selectFrom('attachments')
          .select('file_id')
          .where('document_id', '=', document.id as number)
          .orderBy('id')
          .execute();
        assert.equal(rows.length, uploads.length);
        const stored: StoredFile[] = [];
        for (const [index, row] of rows.entries()) {
          stored.push(await assertStored(server, row.file_id, uploads[index]?.[1]));
        }
        const [files, attachments] = [await countRows('files'), await countRows('attachments')];

        assertAnswer(await destroy(owner, examId, document.id as number), 200, {});

        assertAnswer(
          await show(owner, examId, document.id as number),
          404,
          notFound('Document', document.id as number),
        );
        assert.deepEqual(documentsIn(await list(owner, examId)), []);
        assert.equal(await countRows('attachments'), attachments - 2);
        assert.equal(await countRows('files'), files - 2);
        for (const file of stored) await assertNotStored(server, file);
        for (const url of urls) {
          const download = await fetchAddress(server, url);
          assert.equal(download.status, 404, download.text);
          // On S3 the presigned address still passes s3rver's checks; the object is what is missing.
          if (onS3(server)) assert.match(download.text, /<Code>NoSuchKey<\/Code>/);
        }
      });

      it('lets the exam have a new document afterwards', async () => {
        const examId = await createExam();
        const document = await createDocument(examId, 'Old');
        assertAnswer(await destroy(owner, examId, document.id as number), 200, {});
        const again = await createDocument(examId, 'New');
        assert.notEqual(again.id, document.id);
        assert.deepEqual(documentsIn(await list(owner, examId)), [again]);
      });

      it("answers 404 Couldn't find Document for an unknown id, a second delete and another exam's document", async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const foreign = await createDocument(await createExam(), 'Stays');
        assertAnswer(await destroy(owner, examId, 999999), 404, notFound('Document', 999999));
        assertAnswer(
          await destroy(owner, examId, foreign.id as number),
          404,
          notFound('Document', foreign.id as number),
        );
        assertAnswer(await destroy(owner, examId, document.id as number), 200, {});
        assertAnswer(
          await destroy(owner, examId, document.id as number),
          404,
          notFound('Document', document.id as number),
        );
        assert.equal(
          documentIn(await show(owner, foreign.exam_id as number, foreign.id as number)).exam_content,
          'Stays',
        );
      });

      it('answers 403 to an auditor and a proctor, and 404 to callers who cannot see the exam', async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const id = document.id as number;
        for (const user of [auditor, proctor])
          assertAnswer(await destroy(user, examId, id), 403, NOT_AUTHORIZED);
        for (const user of [otherTeacher, outsideAdmin]) {
          assertAnswer(await destroy(user, examId, id), 404, notFound('Exam', examId));
        }
        assert.deepEqual(documentIn(await show(owner, examId, id)), document);
      });

      it('answers 403 to an unsigned request and to a bad signature', async () => {
        const examId = await createExam();
        const document = await createDocument(examId);
        const params = { exam_id: examId, id: document.id as number };
        const unsigned = await owner.client.v3('DELETE', '/exams/:exam_id/documents/:id', params, {
          unsigned: true,
        });
        assertAnswer(unsigned, 403, NOT_AUTHORIZED);
        const forged = await owner.client.v3('DELETE', '/exams/:exam_id/documents/:id', params, {
          signature: 'a'.repeat(64),
        });
        assertAnswer(forged, 403, NOT_AUTHORIZED);
        assert.deepEqual(documentIn(await show(owner, examId, document.id as number)), document);
      });
    });
  });
}
