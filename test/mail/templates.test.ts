import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { examEndedMail, examLinkMail, type ExamLinkContent, formatTime } from '../../src/mail/templates.ts';

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
