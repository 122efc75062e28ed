/**
 * The session report in the institute's language, or the one a reviewer picks (docs/languages.md,
 * "The PDF report"), read back with poppler as a person would see it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import { invalid } from '../../helpers/answers.ts';
import { pdfInk, pdfPages } from '../../helpers/pdf.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { staffUser } from '../staff/support.ts';

type Staff = Awaited<ReturnType<typeof staffUser>>;

const REPORT = '/student_sessions/:id/report.pdf';
const NAME = 'Élodie Bérénice Façade';

/** Where a test leaves the first page drawn as PNG, to look at (REPORT_PNG_DIR, else the data dir). */
function savePagePng(bytes: Uint8Array, dir: string, name: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const pdf = path.join(dir, `${name}.pdf`);
  fs.writeFileSync(pdf, bytes);
  execFileSync('pdftoppm', [
    '-png',
    '-r',
    '80',
    '-f',
    '1',
    '-l',
    '1',
    '-singlefile',
    pdf,
    path.join(dir, name),
  ]);
  return path.join(dir, `${name}.png`);
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/student_sessions/:id/report.pdf in a language [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 15, 0));
    let server: TestServer;
    let institute: number;
    let owner: Staff;
    let sessionId: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      institute = await server.institute('Université de Genève');
      await server.app.database.db
        .updateTable('institutes')
        .set({ default_language: 'fr' })
        .where('id', '=', institute)
        .execute();
      owner = await staffUser(server, institute, 'teacher');
      const actor: Actor = { id: owner.id, instituteId: institute, role: 'teacher' };
      const exam = await server.app.services.exams.create(actor, {
        name: 'Droit constitutionnel',
        type: 'record_review',
        duration_minutes: 60,
        timezone: 'Europe/Paris',
      });
      const session = await server.app.services.studentSessions.create(actor, exam.id, {
        name: NAME,
        email: 'elodie.facade@example.org',
      });
      sessionId = session.id;
      const start = Date.UTC(2026, 10, 21, 9, 0);
      await server.app.database.db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: start,
          end_time: start + 50 * 60_000,
          recording_started_at: start,
          recording_ended_at: start + 50 * 60_000,
          webcam_check: 'succeeded',
          bandwidth_speed: 12.34,
        })
        .where('id', '=', sessionId)
        .execute();
      clock.current = start + 10 * 60_000;
      await server.app.services.studentSessions.addIncident(actor, sessionId, {
        comment: 'Regarde à côté de l’écran',
      });
      clock.current = Date.UTC(2026, 10, 21, 15, 0);
    });

    after(() => server.close());

    const report = (query: Record<string, string> = {}) =>
      owner.client.v3('GET', REPORT, { id: sessionId, ...query });

    it('writes the report in the institute’s language (French), accented names intact', async () => {
      const answer = await report();
      assert.equal(answer.status, 200, answer.text);
      const text = pdfPages(answer.bytes).join('\n');
      for (const expected of [
        'Rapport de session d’examen',
        NAME,
        'Droit constitutionnel – Université de Genève',
        'Les heures sont indiquées dans le fuseau horaire de l’examen, Europe/Paris.',
        'Étudiant',
        'Établissement',
        'Examen terminé',
        'Vérification de la webcam',
        'Réussie',
        '12,3 Mbit/s',
        // 09:00 UTC is 10:00 in Paris in November.
        '21/11/2026 10:00:00 UTC+1',
        'Incidents (1)',
        'Regarde à côté de l’écran',
        'Aucune décision consignée (évaluation : non évaluée).',
        'Généré le 21/11/2026 16:00:00 UTC+1 par Invigil',
        'Page 1 sur',
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /Student session report|Verdict history|\[U\+/);
      // The heading is drawn, not only extractable.
      assert.ok(pdfInk(answer.bytes, 1, { x: 50, y: 40, width: 250, height: 60 }) > 0.05);
      const png = savePagePng(
        answer.bytes,
        process.env.REPORT_PNG_DIR ?? server.database.dataDir,
        `report-fr-${dialect}`,
      );
      assert.ok(fs.statSync(png).size > 10_000, png);
    });

    it('writes it in the language a reviewer asks for', async () => {
      const answer = await report({ language: 'de' });
      assert.equal(answer.status, 200, answer.text);
      const text = pdfPages(answer.bytes).join('\n');
      for (const expected of [
        'Bericht zur Prüfungssitzung',
        NAME,
        'Prüfung beendet',
        '21.11.2026, 10:00:00 GMT+1',
        'Webcam-Prüfung',
        'Erfolgreich',
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
    });

    it('writes it in Arabic, right to left, the names as typed', async () => {
      const answer = await report({ language: 'ar' });
      assert.equal(answer.status, 200, answer.text);
      // pdftotext marks the direction of each stretch it reads; the words are what matter here.
      const text = pdfPages(answer.bytes)
        .join('\n')
        .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '');
      for (const expected of [
        'تقرير جلسة الاختبار',
        'الطالب',
        'المؤسسة',
        'انتهى الاختبار',
        'فحص كاميرا الويب',
        'ناجح',
        NAME,
        'elodie.facade@example.org',
        'Droit constitutionnel',
        'Université de Genève',
        'Regarde à côté de l’écran',
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /Student session report|\[U\+/);
      // The title is drawn at the right margin, nothing where an English one would start.
      assert.ok(pdfInk(answer.bytes, 1, { x: 400, y: 50, width: 145, height: 24 }) > 0.05);
      assert.equal(pdfInk(answer.bytes, 1, { x: 50, y: 50, width: 200, height: 24 }), 0);
      savePagePng(
        answer.bytes,
        process.env.REPORT_PNG_DIR ?? server.database.dataDir,
        `report-ar-${dialect}`,
      );
    });

    it('answers 422 naming language for a language the service does not speak', async () => {
      const answer = await report({ language: 'pt' });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('language', 'is not included in the list'));
    });
  });
}
