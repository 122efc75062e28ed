import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { type FilePart, SAMPLE } from '../../helpers/multipart.ts';
import { fetchAddress, onS3 } from '../../helpers/files.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { v2Multipart } from '../../helpers/v2-multipart.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const V2_DOCUMENT_FIELDS = [
  'document_id',
  'exam_id',
  'document_text',
  'has_attachments',
  'user_id',
  'institute_id',
];
const V2_ATTACHMENT_FIELDS = ['attachment_id', 'placeholder', 'url', 'exam_id', 'document_id'];

/** A V2 answer with this status and no body at all. */
function assertEmpty(answer: HttpAnswer, status: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.text, '');
}

function file(bytes: Buffer, fileName: string, contentType: string, field = 'file'): FilePart {
  return { field, fileName, contentType, bytes };
}

const pdf = (fileName = 'rules.pdf') => file(SAMPLE.pdf, fileName, 'application/pdf');

for (const dialect of DIALECTS) {
  describe(`V2 documents and attachments [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let colleague: TestUser;
    let proctor: TestUser;
    let outsider: TestUser;

    before(async () => {
      // s3rver judges a presigned address's expiry by the real clock, so the test clock starts there.
      clock.current = Math.floor(Date.now() / 1000) * 1000;
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      colleague = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(async () => {
      await server.close();
    });

    async function createExam(user: TestUser = teacher, name = 'Exam with a document'): Promise<number> {
      const answer = await user.client.v2('POST', '/exams', { name, duration: 60, type: 'classroom' });
      assert.equal(answer.status, 201, answer.text);
      return object(answer.json, 'body').id as number;
    }

    function createDocument(
      user: TestUser,
      params: Record<string, Scalar>,
      options: CallOptions = {},
    ): Promise<HttpAnswer> {
      return user.client.v2('POST', '/documents', params, options);
    }

    /** A new exam of `user` with a document holding `text`; returns both ids. */
    async function examWithDocument(
      text = 'Read the rules.',
      user: TestUser = teacher,
    ): Promise<{ examId: number; documentId: number }> {
      const examId = await createExam(user);
      const answer = await createDocument(user, { exam_id: examId, document_text: text });
      assert.equal(answer.status, 201, answer.text);
      return { examId, documentId: object(answer.json, 'body').id as number };
    }

    function showDocument(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v2('GET', '/documents/:id', { id });
    }

    async function documentRecord(id: Scalar, user: TestUser = teacher): Promise<Json> {
      const answer = await showDocument(user, id);
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.deepEqual(Object.keys(body), ['document']);
      const record = object(body.document, 'document');
      assert.deepEqual(Object.keys(record), V2_DOCUMENT_FIELDS);
      return record;
    }

    function addAttachment(
      user: TestUser,
      id: Scalar,
      files: readonly FilePart[],
      params: Record<string, Scalar> = {},
      options: CallOptions = {},
    ): Promise<HttpAnswer> {
      return v2Multipart(
        user.client,
        'POST',
        '/documents/:id/add_attachment',
        { id, ...params },
        files,
        options,
      );
    }

    function attachmentIn(answer: HttpAnswer): Json {
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.deepEqual(Object.keys(body), ['attachment']);
      const record = object(body.attachment, 'attachment');
      assert.deepEqual(Object.keys(record), V2_ATTACHMENT_FIELDS);
      return record;
    }

    function listAttachments(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v2('GET', '/documents/:id/attachments_list', { id });
    }

    function attachmentsIn(answer: HttpAnswer): Json[] {
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.deepEqual(Object.keys(body), ['attachments']);
      assert.ok(Array.isArray(body.attachments), 'attachments is an array');
      return body.attachments.map((item) => object(item, 'attachment'));
    }

    /** An attachment record without its url, which is signed afresh on every answer. */
    function withoutUrl(record: Json): Json {
      const { url: _url, ...rest } = record;
      return rest;
    }

    describe('POST /api/documents', () => {
      it('answers 201 {id}; the document then reads back as a V2 record', async () => {
        const examId = await createExam();
        const answer = await createDocument(teacher, { exam_id: examId, document_text: 'Bring ID.' });
        assert.equal(answer.status, 201, answer.text);
        const { id } = object(answer.json, 'body');
        assert.ok(Number.isInteger(id), 'id is an integer');
        assert.deepEqual(answer.json, { id });
        assert.deepEqual(await documentRecord(id as number), {
          document_id: id,
          exam_id: examId,
          document_text: '<p>Bring ID.</p>',
          has_attachments: false,
          user_id: teacher.id,
          institute_id: instituteId,
        });
      });

      it('reads a signed form body', async () => {
        const examId = await createExam();
        const answer = await createDocument(
          teacher,
          { exam_id: String(examId), document_text: 'From a form & more' },
          { as: 'form' },
        );
        assert.equal(answer.status, 201, answer.text);
        const record = await documentRecord(object(answer.json, 'body').id as number);
        assert.equal(record.document_text, '<p>From a form &amp; more</p>');
      });

      it('answers 403 with an empty body when the exam already has a document, keeping the first', async () => {
        const { examId, documentId } = await examWithDocument('The first text.');
        assertEmpty(await createDocument(teacher, { exam_id: examId, document_text: 'A second text.' }), 403);
        assert.equal((await documentRecord(documentId)).document_text, '<p>The first text.</p>');
      });

      it('answers 400 with an empty body when exam_id or document_text is missing or empty', async () => {
        const examId = await createExam();
        for (const params of [
          { document_text: 'No exam' },
          { exam_id: '', document_text: 'No exam' },
          { exam_id: examId },
          { exam_id: examId, document_text: '' },
          { exam_id: examId, document_text: '   ' },
        ] as Record<string, Scalar>[]) {
          assertEmpty(await createDocument(teacher, params), 400);
        }
        // Nothing was kept: the exam can still get its first document.
        assert.equal((await createDocument(teacher, { exam_id: examId, document_text: 'Now.' })).status, 201);
      });

      it('answers 400 with an empty body to an exam that is unknown, deleted or out of scope', async () => {
        const examId = await createExam();
        const gone = await createExam();
        assertEmpty(await teacher.client.v2('DELETE', '/exams/:id', { id: gone }), 200);
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, 'abc'],
          [teacher, gone],
          [colleague, examId],
          [outsider, examId],
        ] as const) {
          assertEmpty(await createDocument(user, { exam_id: id, document_text: 'Hijack' }), 400);
        }
        assert.equal(
          (await createDocument(teacher, { exam_id: examId, document_text: 'Mine.' })).status,
          201,
        );
      });

      it('answers 403 with an empty body to a proctor, who sees the exam but may not write', async () => {
        const examId = await createExam();
        assertEmpty(await createDocument(proctor, { exam_id: examId, document_text: 'Proctor text' }), 403);
      });

      it('answers 403 with the JSON message to a wrong signature', async () => {
        const examId = await createExam();
        const answer = await createDocument(
          teacher,
          { exam_id: examId, document_text: 'Forged' },
          { signature: 'b'.repeat(64) },
        );
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('GET /api/documents', () => {
      it('answers 400 with an empty body to a user without documents (an exam without one counts as none)', async () => {
        const newcomer = await server.user(instituteId, 'teacher');
        assertEmpty(await newcomer.client.v2('GET', '/documents'), 400);
        await createExam(newcomer);
        assertEmpty(await newcomer.client.v2('GET', '/documents'), 400);
      });

      it("lists the documents of the caller's own and co-managed exams, by exam, as V2 records", async () => {
        const owner = await server.user(instituteId, 'teacher');
        const comanager = await server.user(instituteId, 'teacher');
        const first = await examWithDocument('First <one>', owner);
        await createExam(owner, 'No document');
        const second = await examWithDocument('Line one\nline two\n\nNew paragraph', owner);
        const theirs = await examWithDocument('Not shared', colleague);
        await server.app.database.db
          .insertInto('exam_comanagers')
          .values({ exam_id: second.examId, user_id: comanager.id, created_at: Date.now() })
          .execute();
        const expectedFirst = {
          document_id: first.documentId,
          exam_id: first.examId,
          document_text: '<p>First &lt;one&gt;</p>',
          has_attachments: false,
          user_id: owner.id,
          institute_id: instituteId,
        };
        const expectedSecond = {
          document_id: second.documentId,
          exam_id: second.examId,
          document_text: '<p>Line one\n<br />line two</p>\n\n<p>New paragraph</p>',
          has_attachments: false,
          user_id: owner.id,
          institute_id: instituteId,
        };
        const listed = await owner.client.v2('GET', '/documents');
        assert.equal(listed.status, 200, listed.text);
        assert.deepEqual(listed.json, { documents: [expectedFirst, expectedSecond] });
        const shared = await comanager.client.v2('GET', '/documents');
        assert.equal(shared.status, 200, shared.text);
        assert.deepEqual(shared.json, { documents: [expectedSecond] });
        assert.ok(
          !(object(listed.json, 'body').documents as Json[]).some((d) => d.document_id === theirs.documentId),
        );
      });

      it("leaves out documents of deleted exams and an administrator's institute's documents", async () => {
        const owner = await server.user(instituteId, 'teacher');
        const kept = await examWithDocument('Kept', owner);
        const gone = await examWithDocument('Gone', owner);
        assertEmpty(await owner.client.v2('DELETE', '/exams/:id', { id: gone.examId }), 200);
        const listed = await owner.client.v2('GET', '/documents');
        assert.equal(listed.status, 200, listed.text);
        assert.deepEqual(
          (object(listed.json, 'body').documents as Json[]).map((d) => d.document_id),
          [kept.documentId],
        );
        const admin = await server.user(instituteId, 'administrator');
        assertEmpty(await admin.client.v2('GET', '/documents'), 400);
      });
    });

    describe('GET /api/documents/:id', () => {
      it('formats document_text as HTML: markup escaped, paragraphs and line breaks, placeholders kept', async () => {
        const text = '<script>alert("x")</script>\r\nSee [attachment:7].\n\n\nIt\'s fine.';
        const { examId, documentId } = await examWithDocument(text);
        assert.deepEqual(await documentRecord(documentId), {
          document_id: documentId,
          exam_id: examId,
          document_text:
            '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\n<br />See [attachment:7].</p>\n\n<p>It&#39;s fine.</p>',
          has_attachments: false,
          user_id: teacher.id,
          institute_id: instituteId,
        });
      });

      it('lets a proctor of the institute read it, with the owner as user_id', async () => {
        const { documentId } = await examWithDocument('Shared reading');
        const record = await documentRecord(documentId);
        assert.deepEqual(await documentRecord(documentId, proctor), record);
        assert.equal(record.user_id, teacher.id);
      });

      it('answers 404 with an empty body to a document that is unknown, of a deleted exam, or out of scope', async () => {
        const { documentId } = await examWithDocument('Private');
        const deleted = await examWithDocument('Deleted exam');
        assertEmpty(await teacher.client.v2('DELETE', '/exams/:id', { id: deleted.examId }), 200);
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, 'abc'],
          [teacher, deleted.documentId],
          [colleague, documentId],
          [outsider, documentId],
        ] as const) {
          assertEmpty(await showDocument(user, id), 404);
        }
      });
    });

    describe('POST /api/documents/:id (update)', () => {
      function update(user: TestUser, id: Scalar, params: Record<string, Scalar>, options: CallOptions = {}) {
        return user.client.v2('POST', '/documents/:id', { id, ...params }, options);
      }

      it('answers 200 with an empty body and replaces the text', async () => {
        const { documentId } = await examWithDocument('Old text');
        assertEmpty(await update(teacher, documentId, { document_text: 'New <em>text</em>' }), 200);
        assert.equal(
          (await documentRecord(documentId)).document_text,
          '<p>New &lt;em&gt;text&lt;/em&gt;</p>',
        );
        assertEmpty(await update(teacher, documentId, { document_text: 'Form text' }, { as: 'form' }), 200);
        assert.equal((await documentRecord(documentId)).document_text, '<p>Form text</p>');
      });

      it('answers 400 with an empty body when document_text is missing or empty, keeping the text', async () => {
        const { documentId } = await examWithDocument('Stays');
        for (const params of [
          {},
          { document_text: '' },
          { document_text: ' ' },
          { exam_content: 'V3 name' },
        ] as Record<string, Scalar>[]) {
          assertEmpty(await update(teacher, documentId, params), 400);
        }
        assert.equal((await documentRecord(documentId)).document_text, '<p>Stays</p>');
      });

      it('answers 400 with an empty body to a document that is unknown or out of scope (api.md: 400 on failure)', async () => {
        const { documentId } = await examWithDocument('Guarded');
        for (const [user, id] of [
          [teacher, 999999],
          [colleague, documentId],
          [outsider, documentId],
        ] as const) {
          assertEmpty(await update(user, id, { document_text: 'Overwritten' }), 400);
        }
        assert.equal((await documentRecord(documentId)).document_text, '<p>Guarded</p>');
      });

      it('answers 403 with an empty body to a proctor, keeping the text', async () => {
        const { documentId } = await examWithDocument('Proctor-proof');
        assertEmpty(await update(proctor, documentId, { document_text: 'Changed' }), 403);
        assert.equal((await documentRecord(documentId)).document_text, '<p>Proctor-proof</p>');
      });
    });

    describe('DELETE /api/documents/:id', () => {
      function destroy(user: TestUser, id: Scalar) {
        return user.client.v2('DELETE', '/documents/:id', { id });
      }

      it('answers 200 with an empty body; the document and its attachments are gone, and the exam may get a new one', async () => {
        const { examId, documentId } = await examWithDocument('Doomed');
        const attachment = attachmentIn(await addAttachment(teacher, documentId, [pdf()]));
        assertEmpty(await destroy(teacher, documentId), 200);
        assertEmpty(await showDocument(teacher, documentId), 404);
        const download = await fetchAddress(server, String(attachment.url));
        assert.equal(download.status, 404, download.text);
        assert.equal(
          (await createDocument(teacher, { exam_id: examId, document_text: 'Again' })).status,
          201,
        );
      });

      it('answers 400 with an empty body to a second delete, an unknown id or a document out of scope', async () => {
        const { documentId } = await examWithDocument('Twice');
        assertEmpty(await destroy(teacher, documentId), 200);
        assertEmpty(await destroy(teacher, documentId), 400);
        assertEmpty(await destroy(teacher, 999999), 400);
        const kept = await examWithDocument('Kept');
        assertEmpty(await destroy(colleague, kept.documentId), 400);
        assertEmpty(await destroy(outsider, kept.documentId), 400);
        assert.equal((await showDocument(teacher, kept.documentId)).status, 200);
      });

      it('answers 403 with an empty body to a proctor, keeping the document', async () => {
        const { documentId } = await examWithDocument('Protected');
        assertEmpty(await destroy(proctor, documentId), 403);
        assert.equal((await showDocument(teacher, documentId)).status, 200);
      });
    });

    describe('POST /api/documents/:id/add_attachment', () => {
      it('answers 200 {attachment: record} with a one-minute address that downloads the file', async () => {
        const { examId, documentId } = await examWithDocument('With a file');
        const record = attachmentIn(await addAttachment(teacher, documentId, [pdf('Übung 1.pdf')]));
        const id = record.attachment_id;
        assert.ok(Number.isInteger(id), 'attachment_id is an integer');
        assert.deepEqual(withoutUrl(record), {
          attachment_id: id,
          placeholder: `[attachment:${String(id)}]`,
          exam_id: examId,
          document_id: documentId,
        });
        const url = new URL(String(record.url));
        if (onS3(server)) {
          // An S3 presigned address, valid the same minute (test/helpers/files.ts checks its form in full).
          assert.equal(url.searchParams.get('X-Amz-Expires'), '60');
        } else {
          assert.equal(url.origin, PUBLIC_URL);
          assert.match(url.pathname, /^\/files\/\d+$/);
          assert.equal(url.searchParams.get('expires'), String(Math.floor(clock.now() / 1000) + 60));
          assert.match(url.searchParams.get('signature') ?? '', /^[0-9a-f]{64}$/);
        }
        const download = await fetchAddress(server, String(record.url));
        assert.equal(download.status, 200, download.text);
        assert.ok(download.bytes.equals(SAMPLE.pdf), 'the same bytes');
        assert.equal((await documentRecord(documentId)).has_attachments, true);
      });

      it('signs the text fields and not the file: a field changed after signing is refused', async () => {
        const { documentId } = await examWithDocument('Tamper');
        const forged = await addAttachment(
          teacher,
          documentId,
          [pdf()],
          { note: 'x' },
          { signature: 'c'.repeat(64) },
        );
        assert.equal(forged.status, 403, forged.text);
        assert.deepEqual(forged.json, NOT_AUTHORIZED);
        attachmentIn(await addAttachment(teacher, documentId, [pdf()], { note: 'signed' }));
      });

      it('answers 400 with an empty body when the file is absent, empty, under another field or of a type not allowed', async () => {
        const { documentId } = await examWithDocument('No files');
        for (const files of [
          [],
          [file(Buffer.alloc(0), 'empty.pdf', 'application/pdf')],
          [file(SAMPLE.pdf, 'rules.pdf', 'application/pdf', 'document')],
          [file(SAMPLE.elf, 'program.pdf', 'application/pdf')],
          [file(SAMPLE.binary, 'blob.bin', 'application/octet-stream')],
        ]) {
          assertEmpty(await addAttachment(teacher, documentId, files), 400);
        }
        assert.deepEqual(attachmentsIn(await listAttachments(teacher, documentId)), []);
        assert.equal((await documentRecord(documentId)).has_attachments, false);
      });

      it('answers 404 with an empty body to a document that is unknown or out of scope', async () => {
        const { documentId } = await examWithDocument('Foreign');
        for (const [user, id] of [
          [teacher, 999999],
          [colleague, documentId],
          [outsider, documentId],
        ] as const) {
          assertEmpty(await addAttachment(user, id, [pdf()]), 404);
        }
        assert.deepEqual(attachmentsIn(await listAttachments(teacher, documentId)), []);
      });

      it('answers 403 with an empty body to a proctor', async () => {
        const { documentId } = await examWithDocument('Read only');
        assertEmpty(await addAttachment(proctor, documentId, [pdf()]), 403);
        assert.deepEqual(attachmentsIn(await listAttachments(teacher, documentId)), []);
      });
    });

    describe('GET /api/documents/:id/attachments_list', () => {
      it('answers {attachments: []} for a document without files', async () => {
        const { documentId } = await examWithDocument('Empty');
        const answer = await listAttachments(teacher, documentId);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { attachments: [] });
      });

      it('lists every attachment of the exam of the document as V2 records, oldest first', async () => {
        const { documentId } = await examWithDocument('Two files');
        const added = [
          attachmentIn(await addAttachment(teacher, documentId, [pdf('a.pdf')])),
          attachmentIn(await addAttachment(teacher, documentId, [file(SAMPLE.png, 'b.png', 'image/png')])),
        ];
        const listed = attachmentsIn(await listAttachments(teacher, documentId));
        assert.deepEqual(listed.map(withoutUrl), added.map(withoutUrl));
        for (const record of listed) {
          const download = await fetchAddress(server, String(record.url));
          assert.equal(download.status, 200, download.text);
        }
        assert.deepEqual(
          attachmentsIn(await listAttachments(proctor, documentId)).map(withoutUrl),
          added.map(withoutUrl),
        );
      });

      it('answers 400 with an empty body to a document that is unknown or out of scope (api.md: 400 on failure)', async () => {
        const { documentId } = await examWithDocument('Hidden files');
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, 'abc'],
          [colleague, documentId],
          [outsider, documentId],
        ] as const) {
          assertEmpty(await listAttachments(user, id), 400);
        }
      });
    });

    describe('DELETE /api/documents/:id/destroy_attachment', () => {
      function destroyAttachment(user: TestUser, id: Scalar, params: Record<string, Scalar>) {
        return user.client.v2('DELETE', '/documents/:id/destroy_attachment', { id, ...params });
      }

      it('answers 200 with an empty body and removes the placeholder from the text', async () => {
        const { documentId } = await examWithDocument('Placeholder pending');
        const gone = attachmentIn(await addAttachment(teacher, documentId, [pdf('gone.pdf')]));
        const kept = attachmentIn(await addAttachment(teacher, documentId, [pdf('kept.pdf')]));
        const goneId = gone.attachment_id as number;
        const text = `Get ${String(gone.placeholder)} and ${String(kept.placeholder)}; [attachment:${goneId}0] stays.`;
        assertEmpty(
          await teacher.client.v2('POST', '/documents/:id', { id: documentId, document_text: text }),
          200,
        );
        assertEmpty(await destroyAttachment(teacher, documentId, { attachment_id: goneId }), 200);
        const record = await documentRecord(documentId);
        assert.equal(
          record.document_text,
          `<p>Get  and ${String(kept.placeholder)}; [attachment:${goneId}0] stays.</p>`,
        );
        assert.equal(record.has_attachments, true);
        assert.deepEqual(attachmentsIn(await listAttachments(teacher, documentId)).map(withoutUrl), [
          withoutUrl(kept),
        ]);
        assertEmpty(
          await destroyAttachment(teacher, documentId, { attachment_id: kept.attachment_id as number }),
          200,
        );
        assert.equal((await documentRecord(documentId)).has_attachments, false);
      });

      it('answers 400 with an empty body when attachment_id is missing, unknown or of another document', async () => {
        const { documentId } = await examWithDocument('Keep mine');
        const other = await examWithDocument('Other');
        const mine = attachmentIn(await addAttachment(teacher, documentId, [pdf()]));
        const theirs = attachmentIn(await addAttachment(teacher, other.documentId, [pdf()]));
        for (const params of [
          {},
          { attachment_id: '' },
          { attachment_id: 999999 },
          { attachment_id: theirs.attachment_id as number },
        ] as Record<string, Scalar>[]) {
          assertEmpty(await destroyAttachment(teacher, documentId, params), 400);
        }
        assert.equal(attachmentsIn(await listAttachments(teacher, documentId)).length, 1);
        assert.equal(attachmentsIn(await listAttachments(teacher, other.documentId)).length, 1);
        assertEmpty(
          await destroyAttachment(teacher, 999999, { attachment_id: mine.attachment_id as number }),
          400,
        );
      });

      it('answers 400 to a caller out of scope and 403 to a proctor, keeping the attachment', async () => {
        const { documentId } = await examWithDocument('Guarded file');
        const record = attachmentIn(await addAttachment(teacher, documentId, [pdf()]));
        const params = { attachment_id: record.attachment_id as number };
        assertEmpty(await destroyAttachment(colleague, documentId, params), 400);
        assertEmpty(await destroyAttachment(outsider, documentId, params), 400);
        assertEmpty(await destroyAttachment(proctor, documentId, params), 403);
        assert.equal(attachmentsIn(await listAttachments(teacher, documentId)).length, 1);
      });
    });
  });
}
