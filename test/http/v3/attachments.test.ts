import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import type { StoredFile } from '../../../src/domain/files/file.ts';
import type { CallOptions } from '../../helpers/client.ts';
import {
  assertNotStored,
  assertPresignedAddress,
  assertStored,
  fetchAddress,
  onS3,
  S3_STORAGE,
} from '../../helpers/files.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { type FilePart, SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const MISSING_DOCUMENT = { error: "Param is missing or the value is empty: 'document'" };
const ATTACHMENT_FIELDS = [
  'id',
  'exam_id',
  'document_id',
  'placeholder',
  'file_name',
  'content_type',
  'file_size',
  'url',
  'created_at',
];
const EXAM_ROUTE = '/exams/:exam_id/attachments';
const DOCUMENT_ROUTE = '/exams/:exam_id/documents/:document_id/attachments';

function attachmentIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').attachment, 'attachment');
}

function attachmentsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').attachments;
  assert.ok(Array.isArray(list), 'attachments is an array');
  return list.map((item) => object(item, 'attachment'));
}

function idsIn(answer: HttpAnswer): unknown[] {
  return attachmentsIn(answer).map((attachment) => attachment.id);
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

function file(bytes: Buffer, fileName: string, contentType: string, field = 'document'): FilePart {
  return { field, fileName, contentType, bytes };
}

const pdf = (fileName = 'rules.pdf') => file(SAMPLE.pdf, fileName, 'application/pdf');
const png = (fileName = 'map.png') => file(SAMPLE.png, fileName, 'image/png');

for (const dialect of DIALECTS) {
  describe(`V3 attachments [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let otherTeacher: TestUser;
    let admin: TestUser;
    let auditor: TestUser;
    let proctor: TestUser;
    let outsideAdmin: TestUser;
    let outsideTeacher: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
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
      outsideTeacher = await server.user(elsewhere, 'teacher');
    });

    after(async () => {
      await server.close();
    });

    async function createExam(user: TestUser = owner): Promise<number> {
      const answer = await user.client.v3('POST', '/exams', {
        name: 'Exam with files',
        type: 'classroom',
        duration_minutes: 60,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    async function createDocument(examId: number, content: string): Promise<Json> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: content,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').document, 'document');
    }

    async function documentOf(examId: number): Promise<Json | undefined> {
      const answer = await owner.client.v3('GET', '/exams/:exam_id/documents', { exam_id: examId });
      assert.equal(answer.status, 200, answer.text);
      const list = object(answer.json, 'body').documents as Json[];
      return list[0];
    }

    /** Uploads to the exam's document, or to a named document when `documentId` is given. */
    function upload(
      user: TestUser,
      examId: Scalar,
      files: readonly FilePart[],
      options: CallOptions & { documentId?: Scalar } = {},
    ): Promise<HttpAnswer> {
      const { documentId, ...callOptions } = options;
      return documentId === undefined
        ? v3Multipart(user.client, 'POST', EXAM_ROUTE, { exam_id: examId }, files, callOptions)
        : v3Multipart(
            user.client,
            'POST',
            DOCUMENT_ROUTE,
            { exam_id: examId, document_id: documentId },
            files,
            callOptions,
          );
    }

    async function attach(examId: number, part: FilePart = pdf(), documentId?: number): Promise<Json> {
      const answer = await upload(owner, examId, [part], documentId === undefined ? {} : { documentId });
      assert.equal(answer.status, 201, answer.text);
      return attachmentIn(answer);
    }

    function show(user: TestUser, examId: Scalar, id: Scalar, documentId?: Scalar): Promise<HttpAnswer> {
      return documentId === undefined
        ? user.client.v3('GET', `${EXAM_ROUTE}/:id`, { exam_id: examId, id })
        : user.client.v3('GET', `${DOCUMENT_ROUTE}/:id`, { exam_id: examId, document_id: documentId, id });
    }

    function list(
      user: TestUser,
      examId: Scalar,
      params: Record<string, Scalar> = {},
      documentId?: Scalar,
    ): Promise<HttpAnswer> {
      return documentId === undefined
        ? user.client.v3('GET', EXAM_ROUTE, { exam_id: examId, ...params })
        : user.client.v3('GET', DOCUMENT_ROUTE, { exam_id: examId, document_id: documentId, ...params });
    }

    function destroy(user: TestUser, examId: Scalar, id: Scalar, documentId?: Scalar): Promise<HttpAnswer> {
      return documentId === undefined
        ? user.client.v3('DELETE', `${EXAM_ROUTE}/:id`, { exam_id: examId, id })
        : user.client.v3('DELETE', `${DOCUMENT_ROUTE}/:id`, { exam_id: examId, document_id: documentId, id });
    }

    async function countRows(table: 'files' | 'attachments' | 'documents'): Promise<number> {
      const row = await server.app.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    /** The id of the stored file holding the attachment's bytes. */
    async function fileIdOf(attachmentId: number): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('attachments')
        .select('file_id')
        .where('id', '=', attachmentId)
        .executeTakeFirstOrThrow();
      return row.file_id;
    }

    /** The record of the stored file holding the attachment's bytes. */
    async function fileOf(attachmentId: number): Promise<StoredFile> {
      const file = await server.app.services.files.find(await fileIdOf(attachmentId));
      assert.ok(file !== undefined, 'the attachment has a file record');
      return file;
    }

    /** Runs `act` and asserts it stored no file and no attachment. */
    async function storesNothing(act: () => Promise<void>): Promise<void> {
      const before = [await countRows('files'), await countRows('attachments'), await countRows('documents')];
      await act();
      assert.deepEqual(
        [await countRows('files'), await countRows('attachments'), await countRows('documents')],
        before,
        'files, attachments and documents unchanged',
      );
    }

    describe(`POST /api/v3${EXAM_ROUTE}`, () => {
      it('answers 201 with the attachment record of a PDF, creating an empty document for the exam', async () => {
        const examId = await createExam();
        assert.equal(await documentOf(examId), undefined);
        const answer = await upload(owner, examId, [pdf('Übungsblatt 1.pdf')]);
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['attachment']);
        const attachment = attachmentIn(answer);
        assert.deepEqual(Object.keys(attachment), ATTACHMENT_FIELDS);
        const document = await documentOf(examId);
        assert.ok(document !== undefined, 'the exam has a document now');
        assert.equal(document.exam_content, '');
        assert.equal(document.attachments_count, 1);
        assert.ok(Number.isInteger(attachment.id) && (attachment.id as number) > 0);
        assert.equal(attachment.exam_id, examId);
        assert.equal(attachment.document_id, document.id);
        assert.equal(attachment.placeholder, `[attachment:${String(attachment.id)}]`);
        assert.equal(attachment.file_name, 'Übungsblatt 1.pdf');
        assert.equal(attachment.content_type, 'application/pdf');
        assert.equal(attachment.file_size, SAMPLE.pdf.length);
        assert.equal(attachment.created_at, new Date(clock.now()).toISOString());
        const file = await fileOf(attachment.id as number);
        assert.equal(file.originalName, 'Übungsblatt 1.pdf');
        if (onS3(server)) {
          // An S3 presigned address, signed now and valid 60 s (X-Amz-Date + X-Amz-Expires).
          assertPresignedAddress(server, String(attachment.url), {
            file,
            seconds: 60,
            signedAt: clock.now(),
          });
        } else {
          const url = new URL(String(attachment.url));
          assert.equal(url.origin, PUBLIC_URL);
          assert.equal(url.pathname, `/files/${file.id}`);
          assert.equal(url.searchParams.get('expires'), String(Math.floor(clock.now() / 1000) + 60));
          assert.match(url.searchParams.get('signature') ?? '', /^[0-9a-f]{64}$/);
        }
        await assertStored(server, file.id, SAMPLE.pdf);
      });

      it("adds a PNG to the exam's existing document, its type recognised from the content", async () => {
        const examId = await createExam();
        const document = await createDocument(examId, 'See the map.');
        const attachment = await attach(examId, file(SAMPLE.png, 'map', 'application/octet-stream'));
        assert.equal(attachment.document_id, document.id);
        assert.equal(attachment.content_type, 'image/png');
        assert.equal(attachment.file_name, 'map');
        assert.equal(attachment.file_size, SAMPLE.png.length);
        const after = await documentOf(examId);
        assert.equal(after?.exam_content, 'See the map.', 'the text is left alone');
        assert.equal(after?.attachments_count, 1);
      });

      for (const [label, part] of [
        [
          'an ELF executable named x.pdf declared application/pdf',
          file(SAMPLE.elf, 'x.pdf', 'application/pdf'),
        ],
        ['random bytes named notes.txt declared text/plain', file(SAMPLE.binary, 'notes.txt', 'text/plain')],
        ['random bytes named photo.png declared image/png', file(SAMPLE.binary, 'photo.png', 'image/png')],
      ] as const) {
        it(`answers 415 for a file whose content is not allowed, whatever its declared type: ${label}`, async () => {
          const examId = await createExam();
          await storesNothing(async () => {
            const answer = await upload(owner, examId, [part]);
            assert.equal(answer.status, 415, answer.text);
            assert.equal(typeof object(answer.json, 'body').error, 'string');
          });
          assert.equal(await documentOf(examId), undefined, 'no document made for a refused file');
        });
      }

      it("answers 422 Param is missing or the value is empty: 'document' when no file is sent", async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          assertAnswer(await upload(owner, examId, []), 422, MISSING_DOCUMENT);
          const json = await owner.client.v3('POST', EXAM_ROUTE, { exam_id: examId });
          assertAnswer(json, 422, MISSING_DOCUMENT);
          const asText = await owner.client.v3('POST', EXAM_ROUTE, {
            exam_id: examId,
            document: 'rules.pdf',
          });
          assertAnswer(asText, 422, MISSING_DOCUMENT);
        });
      });

      it('answers 422 naming document when the file comes in another field', async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          assertAnswer(
            await upload(owner, examId, [file(SAMPLE.pdf, 'a.pdf', 'application/pdf', 'file')]),
            422,
            MISSING_DOCUMENT,
          );
        });
      });

      it('answers 422 naming document when the file is empty', async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          assertAnswer(
            await upload(owner, examId, [file(Buffer.alloc(0), '', 'application/octet-stream')]),
            422,
            MISSING_DOCUMENT,
          );
        });
      });

      it('answers 403 to an unsigned upload and to a bad signature, storing no file', async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          assertAnswer(await upload(owner, examId, [pdf()], { unsigned: true }), 403, NOT_AUTHORIZED);
          assertAnswer(
            await upload(owner, examId, [pdf()], { signature: 'f'.repeat(64) }),
            403,
            NOT_AUTHORIZED,
          );
          const noToken = await upload(owner, examId, [pdf()], { omitHeaders: ['authorization'] });
          assertAnswer(noToken, 403, NOT_AUTHORIZED);
        });
      });

      it('answers 403 when the request is signed for another exam', async () => {
        const examId = await createExam();
        const otherExamId = await createExam();
        const signedFor = owner.client.sign({ exam_id: otherExamId }, { exam_id: String(otherExamId) }, 'v3');
        await storesNothing(async () => {
          const answer = await upload(owner, examId, [pdf()], {
            timestamp: String(signedFor.timestamp),
            nonce: String(signedFor.nonce),
            signature: String(signedFor.signature),
          });
          assertAnswer(answer, 403, NOT_AUTHORIZED);
        });
      });

      it('answers 403 to an auditor and a proctor of the institute, storing no file', async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          for (const user of [auditor, proctor])
            assertAnswer(await upload(user, examId, [pdf()]), 403, NOT_AUTHORIZED);
        });
      });

      it("answers a teacher not owning the exam and another institute's users exactly as an unknown exam", async () => {
        const examId = await createExam();
        await storesNothing(async () => {
          for (const user of [otherTeacher, outsideAdmin, outsideTeacher]) {
            const answer = await upload(user, examId, [pdf()]);
            assert.equal(answer.status, 404);
            assert.equal(answer.text, JSON.stringify(notFound('Exam', examId)));
          }
          assertAnswer(await upload(owner, 999999, [pdf()]), 404, notFound('Exam', 999999));
        });
      });

      it('lets an administrator of the institute attach a file', async () => {
        const examId = await createExam();
        const answer = await upload(admin, examId, [png()]);
        assert.equal(answer.status, 201, answer.text);
        assert.equal(attachmentIn(answer).exam_id, examId);
      });
    });

    describe(`POST /api/v3${DOCUMENT_ROUTE}`, () => {
      it('answers 201 with the attachment of that document', async () => {
        const examId = await createExam();
        const document = await createDocument(examId, 'Instructions');
        const answer = await upload(owner, examId, [png()], { documentId: document.id as number });
        assert.equal(answer.status, 201, answer.text);
        const attachment = attachmentIn(answer);
        assert.equal(attachment.document_id, document.id);
        assert.equal(attachment.exam_id, examId);
        assert.equal(attachment.content_type, 'image/png');
      });

      it("answers 404 Couldn't find Document for an unknown document and another exam's document", async () => {
        const examId = await createExam();
        await createDocument(examId, 'Mine');
        const otherExamId = await createExam();
        const foreign = await createDocument(otherExamId, 'Theirs');
        await storesNothing(async () => {
          assertAnswer(
            await upload(owner, examId, [pdf()], { documentId: 999999 }),
            404,
            notFound('Document', 999999),
          );
          assertAnswer(
            await upload(owner, examId, [pdf()], { documentId: 'abc' }),
            404,
            notFound('Document', 'abc'),
          );
          const across = await upload(owner, examId, [pdf()], { documentId: foreign.id as number });
          assertAnswer(across, 404, notFound('Document', foreign.id as number));
        });
      });

      it('answers 422 naming document when no file is sent', async () => {
        const examId = await createExam();
        const document = await createDocument(examId, 'Instructions');
        assertAnswer(
          await upload(owner, examId, [], { documentId: document.id as number }),
          422,
          MISSING_DOCUMENT,
        );
      });

      it('answers 403 to an auditor, and 404 naming the exam to a teacher not owning it', async () => {
        const examId = await createExam();
        const document = await createDocument(examId, 'Instructions');
        const documentId = document.id as number;
        await storesNothing(async () => {
          assertAnswer(await upload(auditor, examId, [pdf()], { documentId }), 403, NOT_AUTHORIZED);
          assertAnswer(
            await upload(otherTeacher, examId, [pdf()], { documentId }),
            404,
            notFound('Exam', examId),
          );
        });
      });
    });

    describe('GET /api/v3/exams/:exam_id/attachments and .../documents/:document_id/attachments', () => {
      let examId: number;
      let documentId: number;
      let first: Json;
      let second: Json;
      let third: Json;

      before(async () => {
        examId = await createExam();
        first = await attach(examId, pdf('a.pdf'));
        clock.current += 1000;
        second = await attach(examId, png('b.png'));
        clock.current += 1000;
        third = await attach(examId, pdf('c.pdf'));
        documentId = first.document_id as number;
      });

      for (const route of ['exam', 'document'] as const) {
        const through = (id: number) => (route === 'document' ? id : undefined);

        it(`lists the attachments with the pagination headers (${route} route)`, async () => {
          const answer = await list(owner, examId, {}, through(documentId));
          assert.deepEqual(Object.keys(object(answer.json, 'body')), ['attachments']);
          const items = attachmentsIn(answer);
          assert.deepEqual(
            items.map((item) => item.id),
            [first.id, second.id, third.id],
          );
          // The address is minted afresh on every answer (the clock moved since the upload).
          const { url: _url, ...stable } = first;
          const { url, ...listed } = items[0] ?? {};
          assert.deepEqual(listed, stable);
          if (onS3(server)) {
            assertPresignedAddress(server, String(url), {
              file: await fileOf(first.id as number),
              seconds: 60,
              signedAt: clock.now(),
            });
          } else {
            assert.match(
              String(url),
              /^https:\/\/invigil\.example\.test\/files\/\d+\?expires=\d+&signature=[0-9a-f]{64}$/,
            );
          }
          assert.equal(answer.headers['x-pagination-item-count'], '3');
          assert.equal(answer.headers['x-pagination-page-count'], '1');
          assert.equal(answer.headers['x-pagination-page'], '1');
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });

        it(`pages, filters and sorts (${route} route)`, async () => {
          const page = await list(owner, examId, { page: 2, limit: 2 }, through(documentId));
          assert.deepEqual(idsIn(page), [third.id]);
          assert.equal(page.headers['x-pagination-page-count'], '2');
          const pngs = await list(
            owner,
            examId,
            { filter: JSON.stringify({ content_type: { eq: 'image/png' } }) },
            through(documentId),
          );
          assert.deepEqual(idsIn(pngs), [second.id]);
          const named = await list(
            owner,
            examId,
            { filter: JSON.stringify({ file_name: { like: 'C.P' } }) },
            through(documentId),
          );
          assert.deepEqual(idsIn(named), [third.id]);
          const recent = await list(
            owner,
            examId,
            {
              filter: JSON.stringify({ created_at: { gt: first.created_at } }),
              sort: JSON.stringify([{ id: 'desc' }]),
            },
            through(documentId),
          );
          assert.deepEqual(idsIn(recent), [third.id, second.id]);
          const bySize = await list(
            owner,
            examId,
            { sort: JSON.stringify([{ file_size: 'asc' }]) },
            through(documentId),
          );
          assert.deepEqual(idsIn(bySize), [second.id, first.id, third.id]);
        });

        it(`answers 422 naming a field that is not filterable (${route} route)`, async () => {
          const answer = await list(
            owner,
            examId,
            { filter: JSON.stringify({ url: { eq: 'x' } }) },
            through(documentId),
          );
          assert.equal(answer.status, 422, answer.text);
          assert.match(String(object(answer.json, 'body').error), /url/);
        });

        it(`lets an auditor and a proctor of the institute read (${route} route)`, async () => {
          for (const user of [auditor, proctor]) {
            assert.deepEqual(idsIn(await list(user, examId, {}, through(documentId))), [
              first.id,
              second.id,
              third.id,
            ]);
          }
        });

        it(`answers callers who cannot see the exam exactly as an unknown exam (${route} route)`, async () => {
          for (const user of [otherTeacher, outsideAdmin]) {
            const answer = await list(user, examId, {}, through(documentId));
            assert.equal(answer.status, 404);
            assert.equal(answer.text, JSON.stringify(notFound('Exam', examId)));
          }
        });
      }

      it('answers an empty list for an exam without a document on the exam route', async () => {
        const bare = await createExam();
        const answer = await list(owner, bare);
        assert.deepEqual(attachmentsIn(answer), []);
        assert.equal(answer.headers['x-pagination-item-count'], '0');
        assert.equal(answer.headers['x-pagination-page-count'], '0');
        assert.equal(await documentOf(bare), undefined, 'listing creates no document');
      });

      it("answers 404 Couldn't find Document on the document route for an unknown document or another exam's", async () => {
        assertAnswer(await list(owner, examId, {}, 999999), 404, notFound('Document', 999999));
        const otherExamId = await createExam();
        const foreign = await createDocument(otherExamId, 'Theirs');
        const answer = await list(owner, examId, {}, foreign.id as number);
        assertAnswer(answer, 404, notFound('Document', foreign.id as number));
      });
    });

    describe('GET /api/v3/exams/:exam_id/attachments/:id and .../documents/:document_id/attachments/:id', () => {
      it('shows the same record on both route sets', async () => {
        const examId = await createExam();
        const attachment = await attach(examId);
        const byExam = await show(owner, examId, attachment.id as number);
        assert.equal(byExam.status, 200, byExam.text);
        assert.deepEqual(Object.keys(object(byExam.json, 'body')), ['attachment']);
        assert.deepEqual(attachmentIn(byExam), attachment);
        const byDocument = await show(
          owner,
          examId,
          attachment.id as number,
          attachment.document_id as number,
        );
        assert.equal(byDocument.status, 200, byDocument.text);
        assert.deepEqual(attachmentIn(byDocument), attachment);
        for (const user of [auditor, proctor]) {
          assert.deepEqual(attachmentIn(await show(user, examId, attachment.id as number)), attachment);
        }
      });

      it("answers 404 Couldn't find Attachment for an unknown id, a non-numeric id and another exam's attachment", async () => {
        const examId = await createExam();
        const mine = await attach(examId);
        const documentId = mine.document_id as number;
        const otherExamId = await createExam();
        const foreign = await attach(otherExamId);
        const foreignId = foreign.id as number;
        for (const through of [undefined, documentId]) {
          assertAnswer(await show(owner, examId, 999999, through), 404, notFound('Attachment', 999999));
          assertAnswer(await show(owner, examId, 'abc', through), 404, notFound('Attachment', 'abc'));
          assertAnswer(await show(owner, examId, foreignId, through), 404, notFound('Attachment', foreignId));
        }
        const bare = await createExam();
        assertAnswer(
          await show(owner, bare, mine.id as number),
          404,
          notFound('Attachment', mine.id as number),
        );
      });

      it("answers 404 Couldn't find Document on the document route for another exam's document", async () => {
        const examId = await createExam();
        const mine = await attach(examId);
        const foreign = await attach(await createExam());
        const answer = await show(owner, examId, mine.id as number, foreign.document_id as number);
        assertAnswer(answer, 404, notFound('Document', foreign.document_id as number));
      });

      it('answers callers who cannot see the exam exactly as an unknown exam', async () => {
        const examId = await createExam();
        const attachment = await attach(examId);
        for (const user of [otherTeacher, outsideAdmin, outsideTeacher]) {
          const answer = await show(user, examId, attachment.id as number);
          assert.equal(answer.status, 404);
          assert.equal(answer.text, JSON.stringify(notFound('Exam', examId)));
        }
      });
    });

    describe('GET {url} (the expiring download address of an attachment)', () => {
      it('downloads the file byte for byte, with its original name in Content-Disposition', async () => {
        const examId = await createExam();
        for (const [part, type] of [
          [pdf('Übungsblatt 1.pdf'), 'application/pdf'],
          [file(SAMPLE.png, 'plan B (final).png', 'application/octet-stream'), 'image/png'],
        ] as const) {
          const attachment = await attach(examId, part);
          const download = await fetchAddress(server, String(attachment.url));
          assert.equal(download.status, 200, download.text);
          assert.ok(download.bytes.equals(part.bytes), 'the same bytes');
          assert.equal(download.headers['content-type'], type);
          const encoded = encodeURIComponent(part.fileName);
          assert.ok(
            String(download.headers['content-disposition']).endsWith(`filename*=UTF-8''${encoded}`),
            String(download.headers['content-disposition']),
          );
          assert.match(String(download.headers['content-disposition']), /^attachment; filename="/);
        }
      });

      // Local storage only: s3rver does not verify presigned signatures (only key id and expiry).
      if (!S3_STORAGE) {
        it('answers 403 once the address is altered', async () => {
          assert.equal(onS3(server), false, 'a /files/... address of local storage');
          const examId = await createExam();
          const attachment = await attach(examId);
          const other = await attach(examId, png());
          const url = new URL(String(attachment.url));
          const signature = url.searchParams.get('signature') ?? '';
          const expires = url.searchParams.get('expires') ?? '';
          const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
          const otherId = new URL(String(other.url)).pathname.split('/').pop() ?? '';
          for (const altered of [
            `${url.origin}${url.pathname}?expires=${expires}&signature=${flipped}`,
            `${url.origin}${url.pathname}?expires=${Number(expires) + 3600}&signature=${signature}`,
            `${url.origin}/files/${otherId}?expires=${expires}&signature=${signature}`,
            `${url.origin}${url.pathname}?expires=${expires}`,
          ]) {
            const answer = await fetchAddress(server, altered);
            assertAnswer(answer, 403, NOT_AUTHORIZED);
          }
          assert.equal(
            (await fetchAddress(server, url.toString())).status,
            200,
            'the real address still works',
          );
        });
      }

      it('answers 403 once the address has expired (61 s later), and a fresh show gives one that works', async () => {
        const examId = await createExam();
        const attachment = await attach(examId);
        const id = attachment.id as number;
        if (onS3(server)) {
          // s3rver judges the expiry by its own (real) clock: have addresses signed 50 s and 61 s ago.
          const start = clock.now();
          const realNow = Math.floor(Date.now() / 1000) * 1000;
          clock.current = realNow - 50_000;
          const recent = attachmentIn(await show(owner, examId, id));
          const file = await fileOf(id);
          assertPresignedAddress(server, String(recent.url), { file, seconds: 60, signedAt: clock.now() });
          const within = await fetchAddress(server, String(recent.url));
          assert.equal(within.status, 200, 'still valid within the minute');
          assert.ok(within.bytes.equals(SAMPLE.pdf));
          clock.current = realNow - 61_000;
          const old = attachmentIn(await show(owner, examId, id));
          assertPresignedAddress(server, String(old.url), { file, seconds: 60, signedAt: clock.now() });
          const refused = await fetchAddress(server, String(old.url));
          assert.equal(refused.status, 403, refused.text);
          assert.match(refused.text, /<Code>AccessDenied<\/Code>/);
          assert.match(refused.text, /Request has expired/);
          clock.current = Math.max(start, Math.floor(Date.now() / 1000) * 1000);
          const fresh = attachmentIn(await show(owner, examId, id));
          assert.notEqual(fresh.url, old.url);
          const download = await fetchAddress(server, String(fresh.url));
          assert.equal(download.status, 200, download.text);
          assert.ok(download.bytes.equals(SAMPLE.pdf));
          return;
        }
        const url = String(attachment.url);
        clock.current += 59_000;
        assert.equal((await fetchAddress(server, url)).status, 200, 'still valid within the minute');
        clock.current += 2_000;
        assertAnswer(await fetchAddress(server, url), 403, NOT_AUTHORIZED);
        const fresh = attachmentIn(await show(owner, examId, id));
        assert.notEqual(fresh.url, attachment.url);
        const download = await fetchAddress(server, String(fresh.url));
        assert.equal(download.status, 200, download.text);
        assert.ok(download.bytes.equals(SAMPLE.pdf));
      });
    });

    for (const route of ['exam', 'document'] as const) {
      const routeName = route === 'exam' ? EXAM_ROUTE : DOCUMENT_ROUTE;

      describe(`DELETE /api/v3${routeName}/:id`, () => {
        const through = (attachment: Json) =>
          route === 'document' ? (attachment.document_id as number) : undefined;

        it('destroys the attachment, removes every occurrence of its placeholder from the document text and removes the stored file', async () => {
          const examId = await createExam();
          const kept = await attach(examId, png());
          const gone = await attach(examId);
          const goneId = gone.id as number;
          const documentId = gone.document_id as number;
          const text =
            `Read ${String(gone.placeholder)} first.\n${String(gone.placeholder)}` +
            ` and ${String(kept.placeholder)}; [attachment:${goneId}0] stays.`;
          const patched = await owner.client.v3('PATCH', '/exams/:exam_id/documents/:id', {
            exam_id: examId,
            id: documentId,
            exam_content: text,
          });
          assert.equal(patched.status, 200, patched.text);
          const stored = await assertStored(server, await fileIdOf(goneId), SAMPLE.pdf);
          const files = await countRows('files');
          clock.current += 1000;

          assertAnswer(await destroy(owner, examId, goneId, through(gone)), 200, {});

          const document = await documentOf(examId);
          assert.equal(
            document?.exam_content,
            `Read  first.\n and ${String(kept.placeholder)}; [attachment:${goneId}0] stays.`,
          );
          assert.equal(document?.attachments_count, 1);
          assert.equal(document?.updated_at, new Date(clock.now()).toISOString());
          assertAnswer(await show(owner, examId, goneId), 404, notFound('Attachment', goneId));
          assert.deepEqual(idsIn(await list(owner, examId)), [kept.id]);
          assert.equal(await countRows('files'), files - 1);
          await assertNotStored(server, stored);
          await assertStored(server, await fileIdOf(kept.id as number), SAMPLE.png);
          const download = await fetchAddress(server, String(gone.url));
          if (onS3(server)) {
            assert.equal(download.status, 404, download.text);
            assert.match(download.text, /<Code>NoSuchKey<\/Code>/);
          } else {
            assertAnswer(
              download,
              404,
              notFound('Attachment', new URL(String(gone.url)).pathname.split('/').pop() ?? ''),
            );
          }
        });

        it('leaves the document text alone when it holds no placeholder of the attachment', async () => {
          const examId = await createExam();
          const document = await createDocument(examId, 'Nothing to remove.');
          const attachment = await attach(examId);
          assertAnswer(await destroy(owner, examId, attachment.id as number, through(attachment)), 200, {});
          const after = await documentOf(examId);
          assert.equal(after?.exam_content, 'Nothing to remove.');
          assert.equal(after?.updated_at, document.updated_at);
        });

        it("answers 404 Couldn't find Attachment for an unknown id, a second delete and another exam's attachment", async () => {
          const examId = await createExam();
          const attachment = await attach(examId);
          const id = attachment.id as number;
          const foreign = await attach(await createExam());
          assertAnswer(
            await destroy(owner, examId, 999999, through(attachment)),
            404,
            notFound('Attachment', 999999),
          );
          assertAnswer(
            await destroy(owner, examId, foreign.id as number, through(attachment)),
            404,
            notFound('Attachment', foreign.id as number),
          );
          assertAnswer(await destroy(owner, examId, id, through(attachment)), 200, {});
          assertAnswer(
            await destroy(owner, examId, id, through(attachment)),
            404,
            notFound('Attachment', id),
          );
          assert.equal(
            attachmentIn(await show(owner, foreign.exam_id as number, foreign.id as number)).id,
            foreign.id,
          );
        });

        it('answers 403 to an auditor and a proctor, and 404 to callers who cannot see the exam, keeping the file', async () => {
          const examId = await createExam();
          const attachment = await attach(examId);
          const id = attachment.id as number;
          for (const user of [auditor, proctor]) {
            assertAnswer(await destroy(user, examId, id, through(attachment)), 403, NOT_AUTHORIZED);
          }
          for (const user of [otherTeacher, outsideAdmin]) {
            assertAnswer(await destroy(user, examId, id, through(attachment)), 404, notFound('Exam', examId));
          }
          assert.deepEqual(attachmentIn(await show(owner, examId, id)), attachment);
          await assertStored(server, await fileIdOf(id), SAMPLE.pdf);
        });
      });
    }

    describe('DELETE on the document route with a document of another exam', () => {
      it("answers 404 Couldn't find Document and keeps the attachment", async () => {
        const examId = await createExam();
        const attachment = await attach(examId);
        const foreign = await attach(await createExam());
        const answer = await destroy(owner, examId, attachment.id as number, foreign.document_id as number);
        assertAnswer(answer, 404, notFound('Document', foreign.document_id as number));
        assert.equal((await show(owner, examId, attachment.id as number)).status, 200);
      });
    });

    describe('the attachments service, called the way the legacy API addresses a document', () => {
      it('creates a document from document_text, then lists and destroys attachments by document id alone', async () => {
        const { attachments, documents } = server.app.services;
        const actor: Actor = { id: owner.id, instituteId: 0, role: 'teacher' };
        const examId = await createExam();
        const home = await server.app.database.db
          .selectFrom('exams')
          .select('institute_id')
          .where('id', '=', examId)
          .executeTakeFirstOrThrow();
        const teacher: Actor = { ...actor, instituteId: home.institute_id };
        const document = await documents.create(
          teacher,
          examId,
          { document_text: 'Legacy text' },
          'document_text',
        );
        assert.equal(document.examContent, 'Legacy text');
        const attachment = await attach(examId);
        await documents.update(
          teacher,
          { documentId: document.id },
          { document_text: `Open ${String(attachment.placeholder)}` },
          'document_text',
        );
        const page = await attachments.list(teacher, { documentId: document.id }, {});
        assert.deepEqual(
          page.items.map((item) => item.id),
          [attachment.id],
        );
        await assert.rejects(attachments.list(actor, { documentId: document.id }, {}), {
          message: `Couldn't find Document with 'id'=${document.id}`,
        });
        await attachments.destroy(teacher, { documentId: document.id }, attachment.id as number);
        assert.equal((await documents.get(teacher, { documentId: document.id })).examContent, 'Open ');
        await assert.rejects(documents.create(teacher, examId, { document_text: ' ' }, 'document_text'), {
          message: "Param is missing or the value is empty: 'document_text'",
        });
      });
    });
  });

  describe(`V3 attachments over MAX_UPLOAD_BYTES [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;
    let examId: number;

    before(async () => {
      server = await startTestServer(dialect, { env: { MAX_UPLOAD_BYTES: '1000' } });
      owner = await server.user(await server.institute(), 'teacher');
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Small files',
        type: 'demo',
        duration_minutes: 5,
      });
      assert.equal(answer.status, 201, answer.text);
      examId = object(object(answer.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await server.close();
    });

    async function countFiles(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    it('answers 413 for a file over the limit, storing nothing', async () => {
      const big = Buffer.concat([SAMPLE.pdf, Buffer.alloc(1200, 0x20)]);
      const answer = await v3Multipart(owner.client, 'POST', EXAM_ROUTE, { exam_id: examId }, [
        file(big, 'big.pdf', 'application/pdf'),
      ]);
      assert.equal(answer.status, 413, answer.text);
      assert.equal(typeof object(answer.json, 'body').error, 'string');
      assert.equal(await countFiles(), 0);
    });

    it('accepts a file within the limit', async () => {
      const small = Buffer.concat([SAMPLE.pdf, Buffer.alloc(900 - SAMPLE.pdf.length, 0x20)]);
      const answer = await v3Multipart(owner.client, 'POST', EXAM_ROUTE, { exam_id: examId }, [
        file(small, 'small.pdf', 'application/pdf'),
      ]);
      assert.equal(answer.status, 201, answer.text);
      assert.equal(attachmentIn(answer).file_size, 900);
      assert.equal(await countFiles(), 1);
    });
  });
}
