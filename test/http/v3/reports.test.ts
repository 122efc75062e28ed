import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream, PDFRef } from 'pdf-lib';
import type { Actor } from '../../../src/domain/access.ts';
import type { PhotoKind } from '../../../src/domain/student-sessions/photos.service.ts';
import {
  formatInstant,
  renderSessionReport,
  type SessionReportData,
} from '../../../src/domain/reports/session-report.ts';
import { NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { V3_ACCEPT } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

type Staff = Awaited<ReturnType<typeof staffUser>>;

const REPORT = '/student_sessions/:id/report.pdf';

/**
 * The smallest JPEG pdf-lib embeds: the start marker and a baseline frame header naming a 1×1
 * picture with three components (the embedder reads no further; the bytes are passed through).
 */
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x01, 0x00, 0x01, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01,
  0x03, 0x11, 0x01, 0xff, 0xd9,
]);

/** WinAnsi bytes 0x80 to 0x9f that differ from Latin-1 and that these tests meet. */
const WIN_ANSI: Readonly<Record<number, string>> = { 0x80: '€', 0x92: '’', 0x93: '“', 0x94: '”', 0x96: '–' };

/** The text a content stream shows with `<hex> Tj` (how pdf-lib writes standard-font text), in order. */
function shownText(content: string): string[] {
  const lines: string[] = [];
  for (const match of content.matchAll(/<([0-9A-Fa-f]*)> Tj/g)) {
    const bytes = Buffer.from(match[1] ?? '', 'hex');
    lines.push([...bytes].map((byte) => WIN_ANSI[byte] ?? String.fromCharCode(byte)).join(''));
  }
  return lines;
}

/**
 * Reads a PDF back: its page count, each page's shown text (pdf-lib draws no text it cannot
 * encode, so what is there is what a reader sees), and how many images it holds. pdf-lib cannot
 * extract text itself; the content streams are inflated and their text operators read.
 */
async function readPdf(bytes: Uint8Array): Promise<{ pages: string[]; images: number }> {
  const doc = await PDFDocument.load(bytes);
  const pages = doc.getPages().map((page) => {
    const contents = page.node.Contents();
    const refs = contents instanceof PDFArray ? contents.asArray() : [contents];
    const text: string[] = [];
    for (const item of refs) {
      const stream = item instanceof PDFRef ? doc.context.lookup(item) : item;
      if (!(stream instanceof PDFRawStream)) continue;
      text.push(...shownText(Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1')));
    }
    return text.join('\n');
  });
  let images = 0;
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (object instanceof PDFRawStream && object.dict.toString().includes('/Subtype /Image')) images += 1;
  }
  return { pages, images };
}

function assertPdfAnswer(answer: HttpAnswer, sessionId: number): void {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers['content-type'], 'application/pdf');
  assert.equal(
    answer.headers['content-disposition'],
    `attachment; filename="student-session-${sessionId}-report.pdf"; filename*=UTF-8''student-session-${sessionId}-report.pdf`,
  );
  assert.equal(answer.headers['cache-control'], 'private, no-store');
  assert.equal(answer.headers['content-length'], String(answer.bytes.length));
  assert.equal(answer.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
}

describe('renderSessionReport', () => {
  const start = Date.UTC(2026, 10, 21, 8, 30);
  const data: SessionReportData = {
    generatedAt: start + 3 * 3600_000,
    timeZone: 'Asia/Tokyo',
    institute: { id: 1, name: 'Uniwersytet Łódzki' },
    exam: { id: 2, name: 'Logic 王', type: 'record_review' },
    session: {
      id: 3,
      name: 'Zoë Łukasiewicz 王',
      email: 'zoe@example.org',
      attempt: 0,
      status: 'exam_finished',
      archived: false,
      reviewed: 'not_reviewed',
      externalId: null,
      studentId: null,
      lmsUserId: null,
      startTime: start,
      endTime: start + 3600_000,
      endReason: 'finished',
      recordingStartedAt: start,
      recordingEndedAt: start + 3600_000,
      operatingSystem: null,
      browser: null,
      browserVersion: null,
      bandwidthSpeed: null,
      transcodingStatus: 'not_sent_to_queue',
      checks: [],
    },
    photos: [],
    recordings: [],
    incidents: [
      // Control characters and a word wider than the page are shown, not refused.
      {
        id: 1,
        kind: null,
        comment: `Tab\there, bell \u0007, ${'x'.repeat(400)}`,
        offsetSeconds: 90,
        createdAt: start,
      },
    ],
    verdict: undefined,
    history: [],
  };

  it('renders characters the standard fonts lack as their nearest letter or ?, and never fails on them', async () => {
    const { pages } = await readPdf(await renderSessionReport(data));
    const text = pages.join('\n');
    assert.match(text, /Zoë Lukasiewicz \?/);
    assert.match(text, /Uniwersytet Lódzki/);
    assert.match(text, /Logic \?/);
    // Times in the exam's zone: 08:30 UTC is 17:30 in Tokyo; the incident 90 s into the session.
    assert.match(text, /2026-11-21 17:30:00 GMT\+9/);
    assert.match(text, /\+00:01:30/);
    assert.match(text, /2026-11-21 17:31:30 GMT\+9/);
    assert.match(text, /Tab here, bell/);
    assert.match(text, /Generated 2026-11-21 20:30:00 GMT\+9 by Invigil/);
  });

  it('falls back to UTC for a zone the runtime does not know', async () => {
    const { pages } = await readPdf(await renderSessionReport({ ...data, timeZone: 'Mars/Olympus_Mons' }));
    assert.match(pages.join('\n'), /2026-11-21 08:30:00 GMT\b/);
  });
});

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/student_sessions/:id/report.pdf [${dialect}]`, () => {
    const clock = new TestClock(Date.now());
    let server: TestServer;
    let institute: number;
    let admin: Staff;
    let owner: Staff;
    let otherTeacher: Staff;
    let proctor: Staff;
    let reviewer: Staff;
    let auditor: Staff;
    let outsider: Staff;
    let exam: number;
    let uploadDir: string;

    const ownerActor = (): Actor => ({ id: owner.id, instituteId: institute, role: 'teacher' });

    async function newSession(name: string): Promise<number> {
      const session = await server.app.services.studentSessions.create(ownerActor(), exam, {
        name,
        email: `student-${crypto.randomUUID()}@example.org`,
      });
      return session.id;
    }

    async function attach(
      sessionId: number,
      kind: PhotoKind,
      bytes: Buffer,
      fileName: string,
    ): Promise<void> {
      const file = path.join(uploadDir, crypto.randomBytes(8).toString('hex'));
      fs.writeFileSync(file, bytes);
      await server.app.services.photos.attachPhoto(sessionId, kind, {
        field: 'photo',
        fileName,
        declaredType: 'application/octet-stream',
        path: file,
        size: bytes.length,
        head: bytes.subarray(0, 64),
      });
    }

    async function started(sessionId: number, startTime: number, endTime: number): Promise<void> {
      await server.app.database.db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: startTime,
          end_time: endTime,
          recording_started_at: startTime,
          recording_ended_at: endTime,
          browser: 'Firefox',
          browser_version: '131.0',
          operating_system: 'Windows 11',
          webcam_check: 'succeeded',
        })
        .where('id', '=', sessionId)
        .execute();
    }

    const report = (user: Staff, id: number | string) => user.client.v3('GET', REPORT, { id });

    before(async () => {
      server = await startTestServer(dialect, { clock });
      uploadDir = fs.mkdtempSync(path.join(server.database.dataDir, 'uploads-'));
      institute = await server.institute('Université de Genève');
      const elsewhere = await server.institute();
      admin = await staffUser(server, institute, 'administrator');
      owner = await staffUser(server, institute, 'teacher');
      otherTeacher = await staffUser(server, institute, 'teacher');
      proctor = await staffUser(server, institute, 'proctor');
      reviewer = await staffUser(server, institute, 'reviewer');
      auditor = await staffUser(server, institute, 'auditor');
      outsider = await staffUser(server, elsewhere, 'administrator');
      exam = (
        await server.app.services.exams.create(ownerActor(), {
          name: 'Constitutional law',
          type: 'record_review',
          duration_minutes: 60,
          timezone: 'Europe/Berlin',
        })
      ).id;
    });
    after(() => server.close());

    it('answers the PDF with the facts, photos, incidents in time, the verdict and its history', async () => {
      const id = await newSession('Zoë Łukasiewicz 王');
      const start = Date.UTC(2026, 10, 21, 9, 0);
      await started(id, start, start + 50 * 60_000);
      await attach(id, 'id_card', SAMPLE.png, 'id.png');
      await attach(id, 'face_photo', JPEG, 'face.jpg');
      clock.current = start + 10 * 60_000;
      const actor = ownerActor();
      await server.app.services.studentSessions.addIncident(actor, id, { comment: 'Second person in view' });
      await server.app.services.studentSessions.addIncident(actor, id, {
        comment: 'Looked at a phone',
        offset_time: 100,
      });
      clock.current = start + 2 * 3600_000;
      const reviewerActor: Actor = { id: reviewer.id, instituteId: institute, role: 'reviewer' };
      await server.app.services.reviews.record(reviewerActor, id, { verdict: 'in_review' });
      clock.current += 60_000;
      await server.app.services.reviews.record(reviewerActor, id, {
        verdict: 'violation',
        comment: 'A phone is seen twice; the student admits it.',
      });
      // Signed requests need the real time again.
      clock.current = Date.now();

      const answer = await report(proctor, id);
      assertPdfAnswer(answer, id);
      const pdf = await readPdf(answer.bytes);
      assert.equal(pdf.images, 2, 'the ID card and the face photo are embedded');
      const text = pdf.pages.join('\n');
      for (const expected of [
        'Zoë Lukasiewicz ?',
        'Constitutional law',
        'Université de Genève',
        `Student session id`,
        String(id),
        // 09:00 UTC is 10:00 in Berlin in November.
        '2026-11-21 10:00:00 GMT+1',
        '2026-11-21 10:50:00 GMT+1',
        'Firefox 131.0',
        'Windows 11',
        'Webcam check',
        'succeeded',
        // The incident 100 s into the recording comes first; the other was recorded at 10 minutes.
        '+00:01:40',
        '2026-11-21 10:01:40 GMT+1',
        'Looked at a phone',
        '+00:10:00',
        '2026-11-21 10:10:00 GMT+1',
        'Second person in view',
        'violation',
        'A phone is seen twice; the student admits it.',
        'Verdict history (2)',
        'in_review by User',
        '2026-11-21 12:01:00 GMT+1',
        `Generated ${formatInstant(clock.now(), 'Europe/Berlin')} by Invigil`,
        `Page 1 of ${pdf.pages.length}`,
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
      assert.ok(text.indexOf('Looked at a phone') < text.indexOf('Second person in view'), 'ordered by time');
      // No token or pin code of the session is in it.
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select(['token', 'pin_code'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(!text.includes(row.token));
      assert.ok(!answer.bytes.toString('latin1').includes(row.token));
    });

    it('flows a long incident list over several pages, each with its footer', async () => {
      const id = await newSession('Many incidents');
      await started(id, Date.now() - 3600_000, Date.now());
      for (let index = 0; index < 90; index += 1) {
        await server.app.services.studentSessions.addIncident(ownerActor(), id, {
          comment: `Incident number ${index + 1}: ${'the candidate looked away from the screen '.repeat(3)}`,
          offset_time: index * 30,
        });
      }
      const answer = await report(owner, id);
      assertPdfAnswer(answer, id);
      const { pages, images } = await readPdf(answer.bytes);
      assert.ok(pages.length >= 3, `${pages.length} pages`);
      assert.equal(images, 0);
      pages.forEach((page, index) => {
        assert.ok(page.includes(`Page ${index + 1} of ${pages.length}`), `footer of page ${index + 1}`);
      });
      const text = pages.join('\n');
      for (let index = 1; index <= 90; index += 1) {
        assert.ok(text.includes(`Incident number ${index}:`), `incident ${index} is listed`);
      }
      assert.ok(text.includes('No verdict recorded'));
      assert.ok(text.includes('None was taken.'));
    });

    it('names a photo it cannot draw instead of failing (WebP; a damaged PNG)', async () => {
      const id = await newSession('Webp');
      const webp = Buffer.concat([
        Buffer.from('RIFF'),
        Buffer.alloc(4),
        Buffer.from('WEBPVP8 '),
        crypto.randomBytes(64),
      ]);
      await attach(id, 'face_photo', webp, 'face.webp');
      await attach(
        id,
        'id_card',
        Buffer.concat([SAMPLE.png.subarray(0, 16), crypto.randomBytes(40)]),
        'id.png',
      );
      const answer = await report(owner, id);
      assertPdfAnswer(answer, id);
      const text = (await readPdf(answer.bytes)).pages.join('\n');
      assert.ok(text.includes('image/webp'), text);
      assert.match(text, /could not be\s+read/);
    });

    it('is readable by everyone who may read the session, and by the console with its cookie', async () => {
      const id = await newSession('Access');
      for (const user of [admin, owner, proctor, reviewer, auditor])
        assertPdfAnswer(await report(user, id), id);
      const browser = await signIn(server, reviewer.email);
      const answer = await consoleV3(server, browser, 'GET', `/student_sessions/${id}/report.pdf`);
      assertPdfAnswer(answer, id);
    });

    it('answers 404 for a teacher who does not manage the exam, another institute and a missing session', async () => {
      const id = await newSession('Hidden');
      for (const user of [otherTeacher, outsider]) {
        const answer = await report(user, id);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', id));
      }
      const missing = await report(owner, 987654321);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, notFound('Student Session', 987654321));
      const word = await report(owner, 'abc');
      assert.equal(word.status, 404);
      assert.deepEqual(word.json, notFound('Student Session', 'abc'));
    });

    it('refuses unsigned, wrongly signed and replayed requests, and answers 406 without V3 in Accept', async () => {
      const id = await newSession('Signed');
      const unsigned = await owner.client.v3('GET', REPORT, { id }, { unsigned: true });
      assert.equal(unsigned.status, 403);
      assert.deepEqual(unsigned.json, NOT_AUTHORIZED);
      const wrong = await owner.client.v3('GET', REPORT, { id }, { signature: 'ab'.repeat(32) });
      assert.equal(wrong.status, 403);
      assert.deepEqual(wrong.json, NOT_AUTHORIZED);
      const nonce = String(Date.now());
      const timestamp = Date.now();
      assertPdfAnswer(await owner.client.v3('GET', REPORT, { id }, { nonce, timestamp }), id);
      const replay = await owner.client.v3('GET', REPORT, { id }, { nonce, timestamp });
      assert.equal(replay.status, 403);
      assert.deepEqual(replay.json, NOT_AUTHORIZED);
      const stale = await owner.client.v3(
        'GET',
        REPORT,
        { id },
        { timestamp: Date.now() - (86400 + 60) * 1000 },
      );
      assert.equal(stale.status, 403);
      const pdfAccept = await owner.client.v3(
        'GET',
        REPORT,
        { id },
        { headers: { accept: 'application/pdf' } },
      );
      assert.equal(pdfAccept.status, 406);
      const both = await owner.client.v3(
        'GET',
        REPORT,
        { id },
        { headers: { accept: `${V3_ACCEPT}, application/pdf` } },
      );
      assertPdfAnswer(both, id);
    });
  });
}
