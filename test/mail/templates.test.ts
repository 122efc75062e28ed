import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  examEndedMail,
  examLinkMail,
  type ExamLinkContent,
  formatTime,
  formatZonedTime,
  needsList,
} from '../../src/domain/mail/templates.ts';

const ROOM = 'https://exams.example.org/room/0123456789abcdef0123456789abcdef';
const NINE = Date.parse('2026-11-21T09:00:00Z');
const NOON = Date.parse('2026-11-21T12:00:00Z');

function content(overrides: Partial<ExamLinkContent> = {}): ExamLinkContent {
  return {
    studentName: 'Ann',
    examName: 'Algebra',
    roomUrl: ROOM,
    from: NINE,
    until: NOON,
    durationMinutes: 90,
    needs: { webCam: false, screenShare: false, mobileCam: false, uploadAnswers: false },
    individualInfo: null,
    individualInfoIsHtml: false,
    ...overrides,
  };
}

describe('mail templates', () => {
  describe('the exam-link email', () => {
    it('holds the room link, the exam name and the time window in both parts', () => {
      const mail = examLinkMail(content());
      assert.equal(mail.subject, 'Your exam link: Algebra');
      for (const part of [mail.text, mail.html]) {
        assert.ok(part.includes(ROOM));
        assert.ok(part.includes('Algebra'));
        assert.ok(part.includes('You may start from 2026-11-21 09:00 UTC until 2026-11-21 12:00 UTC.'));
        assert.ok(part.includes('Once started, you have 90 minutes.'));
      }
      assert.ok(mail.html.includes(`<a href="${ROOM}">Open your exam room</a>`));
      assert.ok(mail.html.startsWith('<!DOCTYPE html>'));
    });

    it('tells where the candidate may download their own data later', () => {
      const mail = examLinkMail(content());
      const address = new URL('/my-data', ROOM).href;
      assert.ok(mail.text.includes(`download what Invigil holds about your session`));
      assert.ok(mail.text.includes(address));
      assert.ok(mail.html.includes(`<a href="${address}">${address}</a>`));
    });

    it('states an open window, a deadline only, or none', () => {
      assert.ok(
        examLinkMail(content({ until: null })).text.includes('You may start from 2026-11-21 09:00 UTC.'),
      );
      assert.ok(
        examLinkMail(content({ from: null })).text.includes(
          'You may start at any time until 2026-11-21 12:00 UTC.',
        ),
      );
      const open = examLinkMail(content({ from: null, until: null, durationMinutes: null }));
      assert.ok(!open.text.includes('You may start'));
      assert.ok(!open.text.includes('Once started'));
      assert.ok(!open.html.includes('You may start'));
      assert.ok(examLinkMail(content({ durationMinutes: 1 })).text.includes('you have 1 minute.'));
    });

    it('names the exam time zone beside UTC when the exam has one', () => {
      const mail = examLinkMail(content({ timeZone: 'Europe/Berlin' }));
      for (const part of [mail.text, mail.html]) {
        assert.ok(
          part.includes(
            'You may start from 2026-11-21 10:00 Europe/Berlin (09:00 UTC) until 2026-11-21 13:00 Europe/Berlin (12:00 UTC).',
          ),
          part,
        );
      }
      assert.equal(formatZonedTime(NINE, 'UTC'), '2026-11-21 09:00 UTC');
      assert.equal(formatZonedTime(NINE, null), '2026-11-21 09:00 UTC');
      assert.equal(
        formatZonedTime(NINE, 'America/New_York'),
        '2026-11-21 04:00 America/New_York (09:00 UTC)',
      );
      assert.equal(
        formatZonedTime(NINE, 'Not/AZone'),
        '2026-11-21 09:00 UTC',
        'an unknown zone falls back to UTC',
      );
    });

    it('says what the student needs, derived from the exam settings', () => {
      const everything = examLinkMail(
        content({ needs: { webCam: true, screenShare: true, mobileCam: true, uploadAnswers: true } }),
      );
      for (const part of [everything.text, everything.html]) {
        assert.ok(part.includes('What you need:'));
        assert.ok(
          part.includes(
            'A computer (desktop or laptop) with a current Google Chrome, Microsoft Edge or Mozilla Firefox.',
          ),
        );
        assert.ok(part.includes('A camera and a microphone'));
        assert.ok(part.includes('An identity card with your photo'));
        assert.ok(part.includes('share your entire screen'));
        assert.ok(part.includes('A phone with a camera'));
        assert.ok(part.includes('A steady internet connection (at least 1 Mbit/s).'));
        assert.ok(part.includes('you upload them in the exam room'));
        assert.ok(part.includes('the exam room checks your equipment'));
      }
      assert.ok(everything.text.includes('What you need:\n- A computer'));
      assert.ok(everything.html.includes('<ul>\n<li>A computer'));

      const screenOnly = needsList({
        webCam: false,
        screenShare: true,
        mobileCam: false,
        uploadAnswers: false,
      });
      assert.equal(screenOnly.length, 3, JSON.stringify(screenOnly));
      assert.ok(!screenOnly.some((need) => /camera|A phone with|identity/i.test(need)));

      const nothing = examLinkMail(content());
      assert.deepEqual(needsList(content().needs), [
        'A computer (desktop or laptop) with a current Google Chrome, Microsoft Edge or Mozilla Firefox. Phones and tablets cannot run the exam room.',
      ]);
      assert.ok(!nothing.text.includes('internet connection'), 'nothing recorded: no speed asked for');
      assert.ok(!nothing.text.includes('checks your equipment'));
    });

    it('escapes what users typed in the HTML part and keeps it as typed in the text part', () => {
      const mail = examLinkMail(
        content({ studentName: '<img src=x onerror=alert(1)>', examName: 'A & "B"\r\nBcc: x@example.org' }),
      );
      assert.equal(mail.subject, 'Your exam link: A & "B" Bcc: x@example.org', 'the subject stays one line');
      assert.ok(mail.text.includes('Hello <img src=x onerror=alert(1)>,'));
      assert.ok(mail.html.includes('Hello &lt;img src=x onerror=alert(1)&gt;,'));
      assert.ok(!mail.html.includes('<img'));
      assert.ok(mail.html.includes('A &amp; &quot;B&quot;'));
    });

    it('renders plain individual information escaped, with its line breaks', () => {
      const mail = examLinkMail(content({ individualInfo: 'Desk <7>\nBring ID & pen' }));
      assert.ok(mail.text.includes('Information for you:\nDesk <7>\nBring ID & pen'));
      assert.ok(mail.html.includes('<div>Desk &lt;7&gt;<br>\nBring ID &amp; pen</div>'));
    });

    it('renders HTML individual information sanitised, and as readable text in the text part', () => {
      const mail = examLinkMail(
        content({
          individualInfo:
            '<p style="color:red" onclick="steal()">Use <em>desk 9</em> &amp; <a href="https://help.example.org" target="_blank">help</a></p>' +
            '<ul><li>pen</li><li>ID</li></ul><script>alert(1)</script><img src="https://t.example.org/p.gif">' +
            '<a href="javascript:alert(1)">click</a><iframe src="https://evil.example.org"></iframe>',
          individualInfoIsHtml: true,
        }),
      );
      assert.ok(
        mail.html.includes(
          '<div><p>Use <em>desk 9</em> &amp; <a href="https://help.example.org">help</a></p>' +
            '<ul><li>pen</li><li>ID</li></ul><a>click</a></div>',
        ),
        mail.html,
      );
      const info = mail.html.slice(mail.html.indexOf('<div>'), mail.html.indexOf('</div>'));
      for (const banned of ['<script', 'onclick', 'style=', '<img', 'javascript:', '<iframe', 'target=']) {
        assert.ok(!info.includes(banned), `no ${banned}`);
      }
      assert.ok(!mail.html.includes('<script') && !mail.html.includes('alert(1)'));
      assert.ok(
        mail.text.includes('Information for you:\nUse desk 9 & help\n- pen\n- ID\n\nclick'),
        mail.text,
      );
      assert.ok(!mail.text.includes('<'));
      assert.ok(!mail.text.includes('alert'), 'script content is dropped, not shown as text');
    });

    it('leaves out empty individual information', () => {
      for (const info of [null, '', '   ']) {
        const mail = examLinkMail(content({ individualInfo: info }));
        assert.ok(!mail.text.includes('Information for you'));
        assert.ok(!mail.html.includes('Information for you'));
      }
    });
  });

  it('writes the end notification with the exam name and the time, escaped in HTML', () => {
    const mail = examEndedMail({ studentName: 'Bo', examName: 'Chem <lab>', endedAt: NOON });
    assert.equal(mail.subject, 'Your exam has ended: Chem <lab>');
    assert.ok(mail.text.includes('your session of the exam "Chem <lab>" was ended at 2026-11-21 12:00 UTC.'));
    assert.ok(mail.html.includes('<strong>Chem &lt;lab&gt;</strong>'));
    assert.ok(!mail.text.includes('/room/'));
  });

  it('formats times in UTC to the minute', () => {
    assert.equal(formatTime(Date.parse('2026-01-02T03:04:59.999Z')), '2026-01-02 03:04 UTC');
  });
});
