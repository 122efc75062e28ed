/**
 * The LTI pages in the reader's language (docs/languages.md, "LTI pages"): the launch's locale
 * (LTI 1.1 `launch_presentation_locale` here), else the browser's Accept-Language, else English,
 * with `<html lang dir>` to match.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hmacsign } from 'oauth-sign';
import type { Actor } from '../../../src/domain/access.ts';
import { messagePage, refusalText } from '../../../src/http/lti/pages.ts';
import { translator } from '../../../src/i18n/catalogues.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, TestClock } from '../../helpers/server.ts';
import { type LtiWorld, startLtiWorld } from './lti-13.support.ts';

const SECRET = 'shared secret for languages';

describe('LTI pages', () => {
  it('say a refusal in English as it was written, and by its code in another language', () => {
    const english = 'This launch was already used. Go back to your course and open the link again.';
    assert.equal(refusalText(translator('en'), 'replayed_nonce', english), english);
    assert.equal(
      refusalText(translator('de'), 'replayed_nonce', english),
      'Dieser Start wurde bereits verwendet. Gehen Sie zurück zu Ihrem Kurs und öffnen Sie den Link erneut.',
    );
    // A registration's technical fault: the detail stays, for the platform's administrator.
    assert.match(
      refusalText(translator('fr'), 'wrong_audience', 'The launch names another tool (azp).'),
      /^Invigil n’a pas pu accepter ce lancement\. .*: The launch names another tool \(azp\)\.$/,
    );
  });

  it('write <html lang dir> in the page’s language, right to left for Arabic', () => {
    const t = translator('ar');
    const page = messagePage('عنوان', 'نص', { t, returnUrl: 'https://lms.example.edu/course' });
    assert.match(page.html, /<html lang="ar" dir="rtl">/);
    assert.ok(page.html.includes('>العودة إلى المقرر</a>'), page.html);
    assert.match(messagePage('Title', 'Text').html, /<html lang="en" dir="ltr">/);
  });
});

for (const dialect of DIALECTS) {
  describe(`LTI pages in the launch’s language [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let world: LtiWorld;
    let consumerKey: string;
    let examId: number;

    before(async () => {
      world = await startLtiWorld(dialect, { clock });
      const { services } = world.app;
      const admin = await services.users.create(world.instituteId, {
        email: `admin-${crypto.randomBytes(3).toString('hex')}@example.org`,
        name: 'Admin',
        role: 'administrator',
      });
      const adminActor: Actor = { id: admin.user.id, instituteId: world.instituteId, role: 'administrator' };
      consumerKey = `moodle-${crypto.randomBytes(4).toString('hex')}`;
      await services.toolProviders.create(adminActor, {
        name: 'Moodle 1.1',
        lti_version: '1.1',
        consumer_key: consumerKey,
        shared_secret: SECRET,
      });
      examId = (
        await services.exams.create(adminActor, {
          name: 'Chemie',
          type: 'record_review',
          duration_minutes: 90,
        })
      ).id;
    });

    after(async () => {
      await world?.close();
    });

    function signedForm(overrides: Record<string, string> = {}): Record<string, string> {
      const params: Record<string, string> = {
        lti_message_type: 'basic-lti-launch-request',
        lti_version: 'LTI-1p0',
        resource_link_id: 'moodle-rl-lang',
        user_id: `moodle-user-${crypto.randomBytes(3).toString('hex')}`,
        roles: 'Learner',
        lis_person_name_full: 'Lise Meitner',
        lis_person_contact_email_primary: `lise-${crypto.randomBytes(3).toString('hex')}@example.edu`,
        custom_invigil_exam_id: String(examId),
        oauth_consumer_key: consumerKey,
        oauth_nonce: crypto.randomBytes(16).toString('hex'),
        oauth_signature_method: 'HMAC-SHA1',
        oauth_timestamp: String(Math.floor(clock.now() / 1000)),
        oauth_version: '1.0',
        ...overrides,
      };
      params.oauth_signature = hmacsign('POST', `${world.baseUrl}/lti/launch`, params, SECRET);
      return params;
    }

    function post(form: Record<string, string>, headers: Record<string, string> = {}) {
      return httpRequest({
        url: `${world.baseUrl}/lti/launch`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    }

    it('shows a framed learner the exam room’s link in the launch’s language', async () => {
      const answer = await post(signedForm({ launch_presentation_locale: 'de_DE' }), {
        'sec-fetch-dest': 'iframe',
        'accept-language': 'fr',
      });
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.text, /<html lang="de" dir="ltr">/);
      assert.match(answer.text, /<h1>Ihre Prüfung ist bereit<\/h1>/);
      assert.match(answer.text, />Prüfungsraum öffnen<\/a>/);
    });

    it('falls back to the browser’s language, then English', async () => {
      const french = await post(signedForm(), {
        'sec-fetch-dest': 'iframe',
        'accept-language': 'fr-CH, en;q=0.5',
      });
      assert.match(french.text, /<html lang="fr" dir="ltr">/);
      assert.match(french.text, /<h1>Votre examen est prêt<\/h1>/);
      const english = await post(signedForm(), { 'sec-fetch-dest': 'iframe' });
      assert.match(english.text, /<html lang="en" dir="ltr">/);
      assert.match(english.text, /<h1>Your exam is ready<\/h1>/);
    });

    it('refuses a stale launch in Arabic, right to left', async () => {
      const stale = await post(
        signedForm({
          launch_presentation_locale: 'ar',
          oauth_timestamp: String(Math.floor(clock.now() / 1000) - 600),
        }),
      );
      assert.equal(stale.status, 401);
      assert.match(stale.text, /<html lang="ar" dir="rtl">/);
      assert.ok(stale.text.includes('<h1>تعذّر التحقق من هذا التشغيل</h1>'), stale.text);
      assert.ok(stale.text.includes('هذا التشغيل قديم جدًا'), stale.text);
    });
  });
}
