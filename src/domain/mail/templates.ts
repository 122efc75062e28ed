import { translator } from '../../i18n/catalogues.ts';
import { formatDateTime } from '../../i18n/dates.ts';
import { textDirection } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import { escapeHtml, htmlToText, individualInfoHtml } from '../../security/html.ts';

/**
 * The emails Invigil sends, each rendered once, when it is written to the outbox, as a subject, a
 * plain-text part and an HTML part. Everything a user typed (names, the exam's name, a student's
 * individual information) is HTML-escaped in the HTML part; individual information flagged as HTML
 * is sanitised to a small allow-list instead. Every sentence comes from the catalogue's `email.*`
 * messages in the reader's language (the caller's translator: mail-language.ts says which
 * language, with the institute's overrides); English when no translator is given (docs/mail.md).
 */

/** A message as the outbox stores it. */
export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** What the exam-link email says. Times are epoch milliseconds. */
export interface ExamLinkContent {
  readonly studentName: string;
  readonly examName: string;
  /** `{PUBLIC_URL}/room/<token>`: the student's only credential for the room. */
  readonly roomUrl: string;
  /** The session's open_time, else the exam's start_time; null: no lower bound. */
  readonly from: number | null;
  /** The exam's end_time; null: no upper bound. */
  readonly until: number | null;
  /** Minutes the student has once started, or null when no duration applies. */
  readonly durationMinutes: number | null;
  /**
   * The IANA time zone the window is written in (the exam's `timezone`), with UTC beside it; UTC
   * alone when it is UTC or absent.
   */
  readonly timeZone?: string | null;
  /** What the exam's settings ask of the student's equipment (see `examNeeds`). */
  readonly needs: ExamNeeds;
  readonly individualInfo: string | null;
  readonly individualInfoIsHtml: boolean;
  /**
   * The practice page of the setup (docs/practice.md); left out, `{roomUrl}/practice`. Offered only
   * when the exam records something (a camera, the screen or a phone).
   */
  readonly practiceUrl?: string;
}

/** The exam settings that decide what a student needs: the exam's flags of the same names. */
export interface ExamNeeds {
  readonly webCam: boolean;
  readonly screenShare: boolean;
  readonly mobileCam: boolean;
  readonly uploadAnswers: boolean;
}

/** Picks the settings the exam-link email's list of needs is made from. Returns them. */
export function examNeeds(exam: ExamNeeds): ExamNeeds {
  return {
    webCam: exam.webCam,
    screenShare: exam.screenShare,
    mobileCam: exam.mobileCam,
    uploadAnswers: exam.uploadAnswers,
  };
}

/** What the end-of-exam notification says. */
export interface ExamEndedContent {
  readonly studentName: string;
  readonly examName: string;
  /** Epoch milliseconds. */
  readonly endedAt: number;
  /** The exam's IANA time zone the time is written in; UTC when absent. */
  readonly timeZone?: string | null;
}

/** A subject is one header line: line breaks a user typed into a name become spaces. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').trim();
}

/**
 * Returns the time as `2026-11-21 09:30 UTC` (emails reach people in any time zone, so UTC is stated,
 * not implied). Throws a RangeError for a time outside what Date can hold.
 */
export function formatTime(millis: number): string {
  const iso = new Date(millis).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * Returns the time in `timeZone` with the zone named and UTC beside it, `2026-11-21 10:30
 * Europe/Berlin (09:30 UTC)`, or as formatTime does when the zone is UTC, absent or unknown to
 * this Node (the exam record validates zones, so that is a safety net, not a path).
 */
export function formatZonedTime(millis: number, timeZone: string | null | undefined): string {
  if (timeZone === undefined || timeZone === null || timeZone === 'UTC' || timeZone === 'Etc/UTC') {
    return formatTime(millis);
  }
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(millis);
  } catch {
    return formatTime(millis);
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((item) => item.type === type)?.value ?? '';
  const utc = new Date(millis).toISOString().slice(11, 16);
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${timeZone} (${utc} UTC)`;
}

/**
 * A time as an email of `t`'s language writes it, always with its zone: in English the exam's zone
 * with UTC beside it (formatZonedTime, which English emails have always used); in any other
 * language the date and time in that language's words, in the exam's zone, named (dates.ts).
 * Returns it; throws nothing.
 */
export function mailTime(t: Translator, millis: number, zone: string | null | undefined): string {
  if (t.locale === 'en') return formatZonedTime(millis, zone);
  try {
    return formatDateTime(millis, t.locale, zone ?? 'UTC');
  } catch {
    return formatTime(millis);
  }
}

/** The time window as one sentence, or undefined when the exam sets none. */
function windowSentence(
  t: Translator,
  from: number | null,
  until: number | null,
  zone: string | null | undefined,
): string | undefined {
  const time = (millis: number) => mailTime(t, millis, zone);
  if (from !== null && until !== null)
    return t.t('email.examLink.windowBetween', { from: time(from), until: time(until) });
  if (from !== null) return t.t('email.examLink.windowFrom', { from: time(from) });
  if (until !== null) return t.t('email.examLink.windowUntil', { until: time(until) });
  return undefined;
}

/**
 * What the student needs for this exam, one sentence each, from the exam's settings: always a
 * computer with a browser the room supports; camera and microphone (and an ID card) when the webcam
 * is recorded; screen sharing when the screen is; a phone when a mobile camera is used; a steady
 * connection when anything is recorded; answer files when answers are uploaded. Returns them.
 */
export function needsList(needs: ExamNeeds, t: Translator = translator('en')): string[] {
  const recorded = needs.webCam || needs.screenShare || needs.mobileCam;
  const list = [t.t('email.examLink.needComputer')];
  if (needs.webCam) {
    list.push(t.t('email.examLink.needCamera'));
    list.push(t.t('email.examLink.needIdCard'));
  }
  if (needs.screenShare) list.push(t.t('email.examLink.needScreen'));
  if (needs.mobileCam) list.push(t.t('email.examLink.needPhone'));
  if (recorded) list.push(t.t('email.examLink.needConnection'));
  if (needs.uploadAnswers) list.push(t.t('email.examLink.needAnswers'));
  return list;
}

/** The sentence after the list: how the room checks the equipment first, when it records anything. */
function checkSentence(t: Translator, needs: ExamNeeds): string | undefined {
  if (!(needs.webCam || needs.screenShare || needs.mobileCam)) return undefined;
  return t.t('email.examLink.checkEarly');
}

function durationSentence(t: Translator, minutes: number | null): string | undefined {
  if (minutes === null) return undefined;
  return t.t('email.examLink.duration', { minutes });
}

/**
 * A sentence whose `<quoted>` tag names what a user typed (the exam's name): in the text part in the
 * language's quotation marks, in the HTML part escaped and bold. Returns both forms.
 */
function namingSentence(
  t: Translator,
  key: string,
  values: Record<string, string>,
): { text: string; html: string } {
  let text = '';
  let html = '';
  for (const part of t.rich(key, values)) {
    if (typeof part === 'string') {
      text += part;
      html += escapeHtml(part);
      continue;
    }
    text += t.t('email.common.quoted', { text: part.text });
    html += `<strong>${escapeHtml(part.text)}</strong>`;
  }
  return { text, html };
}

/**
 * The HTML document around a body, in the reader's language and writing direction: `lang` and
 * `dir` on <html>, and `dir` on the body again, because some mail clients keep only the body.
 */
function page(t: Translator, subject: string, body: string): string {
  const dir = textDirection(t.locale);
  const align = dir === 'rtl' ? ' text-align: right;' : '';
  return [
    '<!DOCTYPE html>',
    `<html lang="${escapeHtml(t.locale)}" dir="${dir}">`,
    '<head><meta charset="utf-8"><title>' + escapeHtml(subject) + '</title></head>',
    `<body dir="${dir}" style="font-family: sans-serif; line-height: 1.5; color: #222;${align}">`,
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * The exam-link email: the room address, the exam's name, the time window (in the exam's time zone,
 * named) and duration, what the student needs (from the exam's settings), and the student's
 * individual information, in `t`'s language (English by default). Returns the rendered message;
 * throws nothing.
 */
export function examLinkMail(content: ExamLinkContent, t: Translator = translator('en')): RenderedMail {
  const subject = oneLine(t.t('email.examLink.subject', { exam: content.examName }));
  const greeting = t.t('email.common.greeting', { name: content.studentName });
  const registered = namingSentence(t, 'email.examLink.registered', { exam: content.examName });
  const when = windowSentence(t, content.from, content.until, content.timeZone);
  const duration = durationSentence(t, content.durationMinutes);
  const needs = needsList(content.needs, t);
  const check = checkSentence(t, content.needs);
  const needsHeading = t.t('email.examLink.needsHeading');
  const infoHeading = t.t('email.examLink.infoHeading');
  const personal = t.t('email.examLink.personal');
  const info =
    content.individualInfo === null || content.individualInfo.trim() === '' ? null : content.individualInfo;
  const infoHtml = individualInfoHtml(info, content.individualInfoIsHtml);
  const infoText = info === null ? null : content.individualInfoIsHtml ? htmlToText(info) : info;

  const practiceUrl = content.practiceUrl ?? `${content.roomUrl}/practice`;
  const practice = check === undefined ? undefined : t.t('email.examLink.practice');
  // The candidate's own data (docs/candidate-data.md): the public request page beside the room.
  const myDataUrl = new URL('/my-data', content.roomUrl).href;
  const yourData = t.t('email.examLink.yourData');

  const text = [
    greeting,
    '',
    registered.text,
    ...(when === undefined ? [] : ['', when]),
    ...(duration === undefined ? [] : [duration]),
    '',
    needsHeading,
    ...needs.map((need) => `- ${need}`),
    ...(check === undefined ? [] : ['', check]),
    ...(practice === undefined ? [] : ['', practice, practiceUrl]),
    '',
    t.t('email.examLink.openWithLink'),
    content.roomUrl,
    ...(infoText === null || infoText === '' ? [] : ['', infoHeading, infoText]),
    '',
    personal,
    '',
    yourData,
    myDataUrl,
    '',
  ].join('\n');

  const html = page(
    t,
    subject,
    [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${registered.html}</p>`,
      ...(when === undefined && duration === undefined
        ? []
        : [
            `<p>${[when, duration]
              .filter((part) => part !== undefined)
              .map(escapeHtml)
              .join('<br>\n')}</p>`,
          ]),
      `<p>${escapeHtml(needsHeading)}</p>`,
      `<ul>\n${needs.map((need) => `<li>${escapeHtml(need)}</li>`).join('\n')}\n</ul>`,
      ...(check === undefined ? [] : [`<p>${escapeHtml(check)}</p>`]),
      ...(practice === undefined
        ? []
        : [
            `<p>${escapeHtml(practice)}<br>\n<a href="${escapeHtml(practiceUrl)}">${escapeHtml(t.t('email.examLink.practiceButton'))}</a></p>`,
          ]),
      `<p><a href="${escapeHtml(content.roomUrl)}">${escapeHtml(t.t('email.examLink.openButton'))}</a><br>`,
      `${escapeHtml(content.roomUrl)}</p>`,
      ...(infoHtml === null ? [] : [`<p>${escapeHtml(infoHeading)}</p>`, `<div>${infoHtml}</div>`]),
      `<p>${escapeHtml(personal)}</p>`,
      `<p>${escapeHtml(yourData)}<br>\n<a href="${escapeHtml(myDataUrl)}">${escapeHtml(myDataUrl)}</a></p>`,
    ].join('\n'),
  );
  return { subject, text, html };
}

/**
 * The notification that a student's exam session was ended (end_exam), in `t`'s language (English
 * by default), the time in the exam's zone when `content.timeZone` names one. Returns the rendered
 * message; throws nothing.
 */
export function examEndedMail(content: ExamEndedContent, t: Translator = translator('en')): RenderedMail {
  const subject = oneLine(t.t('email.examEnded.subject', { exam: content.examName }));
  const greeting = t.t('email.common.greeting', { name: content.studentName });
  const ended = namingSentence(t, 'email.examEnded.ended', {
    exam: content.examName,
    time: mailTime(t, content.endedAt, content.timeZone),
  });
  const stopped = t.t('email.examEnded.nothingMore');
  const text = [greeting, '', ended.text, stopped, ''].join('\n');
  const html = page(
    t,
    subject,
    [`<p>${escapeHtml(greeting)}</p>`, `<p>${ended.html}</p>`, `<p>${escapeHtml(stopped)}</p>`].join('\n'),
  );
  return { subject, text, html };
}

/** What the verdict notice says (docs/appeals.md). Times are epoch milliseconds. */
export interface VerdictNoticeContent {
  readonly studentName: string;
  readonly examName: string;
  /** `suspicious` or `violation`. */
  readonly verdict: string;
  /** The last instant an appeal is accepted. */
  readonly appealUntil: number;
  /** `{PUBLIC_URL}/room/<token>`: where the candidate appeals. */
  readonly roomUrl: string;
  readonly timeZone?: string | null;
}

/**
 * The notice of a final `suspicious` or `violation` verdict: what the review found, and that the
 * candidate may appeal until a date through their room link, in `t`'s language (the institute's
 * wording on top). Returns the rendered message; throws nothing.
 */
export function verdictNoticeMail(
  content: VerdictNoticeContent,
  t: Translator = translator('en'),
): RenderedMail {
  const subject = oneLine(t.t('email.verdictNotice.subject', { exam: content.examName }));
  const greeting = t.t('email.common.greeting', { name: content.studentName });
  const found = namingSentence(
    t,
    content.verdict === 'violation' ? 'email.verdictNotice.violation' : 'email.verdictNotice.suspicious',
    { exam: content.examName },
  );
  const appeal = t.t('email.verdictNotice.appealUntil', {
    time: mailTime(t, content.appealUntil, content.timeZone),
  });
  const open = t.t('email.verdictNotice.openRoom');
  const personal = t.t('email.examLink.personal');
  const text = [greeting, '', found.text, '', appeal, open, content.roomUrl, '', personal, ''].join('\n');
  const html = page(
    t,
    subject,
    [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${found.html}</p>`,
      `<p>${escapeHtml(appeal)}</p>`,
      `<p><a href="${escapeHtml(content.roomUrl)}">${escapeHtml(open)}</a><br>`,
      `${escapeHtml(content.roomUrl)}</p>`,
      `<p>${escapeHtml(personal)}</p>`,
    ].join('\n'),
  );
  return { subject, text, html };
}

/** What the email on a decided appeal says. */
export interface AppealDecisionContent {
  readonly studentName: string;
  readonly examName: string;
  /** `upheld` or `overturned`. */
  readonly decision: string;
  /** The deciding reviewer's comment, or null. */
  readonly comment: string | null;
  /** `{PUBLIC_URL}/room/<token>`: where the decision is shown. */
  readonly roomUrl: string;
}

/**
 * The email on a decided appeal (docs/appeals.md): whether the second reviewer upheld or overturned
 * the verdict, with the reviewer's reasons when given, in `t`'s language (the institute's wording on
 * top). Returns the rendered message; throws nothing.
 */
export function appealDecisionMail(
  content: AppealDecisionContent,
  t: Translator = translator('en'),
): RenderedMail {
  const subject = oneLine(t.t('email.appealDecision.subject', { exam: content.examName }));
  const greeting = t.t('email.common.greeting', { name: content.studentName });
  const outcome = namingSentence(
    t,
    content.decision === 'overturned' ? 'email.appealDecision.overturned' : 'email.appealDecision.upheld',
    { exam: content.examName },
  );
  const comment = content.comment === null || content.comment.trim() === '' ? null : content.comment;
  const reasons = t.t('email.appealDecision.reasons');
  const open = t.t('email.appealDecision.openRoom');
  const personal = t.t('email.examLink.personal');
  const text = [
    greeting,
    '',
    outcome.text,
    ...(comment === null ? [] : ['', reasons, comment]),
    '',
    open,
    content.roomUrl,
    '',
    personal,
    '',
  ].join('\n');
  const html = page(
    t,
    subject,
    [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${outcome.html}</p>`,
      ...(comment === null
        ? []
        : [`<p>${escapeHtml(reasons)}</p>`, `<p>${individualInfoHtml(comment, false) ?? ''}</p>`]),
      `<p><a href="${escapeHtml(content.roomUrl)}">${escapeHtml(open)}</a><br>`,
      `${escapeHtml(content.roomUrl)}</p>`,
      `<p>${escapeHtml(personal)}</p>`,
    ].join('\n'),
  );
  return { subject, text, html };
}

/** What the practice reminder says. */
export interface PracticeReminderContent {
  readonly studentName: string;
  readonly examName: string;
  /** `{PUBLIC_URL}/room/<token>/practice`: as personal as the room link. */
  readonly practiceUrl: string;
}

/**
 * The practice reminder an exam office sends to students who have not passed a practice run
 * (docs/practice.md): what the practice is, and its link, in `t`'s language. Returns the rendered
 * message; throws nothing.
 */
export function practiceReminderMail(
  content: PracticeReminderContent,
  t: Translator = translator('en'),
): RenderedMail {
  const subject = oneLine(t.t('email.practiceReminder.subject', { exam: content.examName }));
  const greeting = t.t('email.common.greeting', { name: content.studentName });
  const intro = namingSentence(t, 'email.practiceReminder.intro', { exam: content.examName });
  const what = t.t('email.practiceReminder.what');
  const open = t.t('email.practiceReminder.openWithLink');
  const personal = t.t('email.examLink.personal');
  const text = [greeting, '', intro.text, what, '', open, content.practiceUrl, '', personal, ''].join('\n');
  const html = page(
    t,
    subject,
    [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${intro.html}</p>`,
      `<p>${escapeHtml(what)}</p>`,
      `<p><a href="${escapeHtml(content.practiceUrl)}">${escapeHtml(t.t('email.examLink.practiceButton'))}</a><br>`,
      `${escapeHtml(content.practiceUrl)}</p>`,
      `<p>${escapeHtml(personal)}</p>`,
    ].join('\n'),
  );
  return { subject, text, html };
}

/** What a staff invitation or password-reset email says. */
export interface StaffLinkContent {
  readonly name: string;
  readonly email: string;
  /** The one-time link (`{PUBLIC_URL}/console/...?token=...`). */
  readonly url: string;
  /** When the link stops working, epoch milliseconds. */
  readonly expiresAt: number;
}

/** The catalogue keys of one kind of staff link email. */
interface StaffLinkKeys {
  readonly subject: string;
  readonly opening: string;
  readonly action: string;
}

function staffLinkMail(keys: StaffLinkKeys, content: StaffLinkContent, t: Translator): RenderedMail {
  const subject = t.t(keys.subject);
  const greeting = t.t('email.common.greeting', { name: content.name });
  const opening = t.t(keys.opening);
  const action = t.t(keys.action);
  const validity = t.t('email.common.linkValidity', {
    time: mailTime(t, content.expiresAt, null),
    email: content.email,
  });
  const text = [
    greeting,
    '',
    opening,
    '',
    t.t('email.common.linkLine', { action }),
    content.url,
    '',
    validity,
    '',
  ].join('\n');
  const html = page(
    t,
    subject,
    [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${escapeHtml(opening)}</p>`,
      `<p><a href="${escapeHtml(content.url)}">${escapeHtml(action)}</a><br>`,
      `${escapeHtml(content.url)}</p>`,
      `<p>${escapeHtml(validity)}</p>`,
    ].join('\n'),
  );
  return { subject: oneLine(subject), text, html };
}

/**
 * The invitation of a staff user to choose a password, in `t`'s language (English by default).
 * Returns the rendered message; throws nothing.
 */
export function staffInvitationMail(
  content: StaffLinkContent,
  t: Translator = translator('en'),
): RenderedMail {
  return staffLinkMail(
    {
      subject: 'email.staffInvitation.subject',
      opening: 'email.staffInvitation.opening',
      action: 'email.staffInvitation.action',
    },
    content,
    t,
  );
}

/**
 * The link to choose a new password after "forgot password", in `t`'s language (English by
 * default). Returns the rendered message; throws nothing.
 */
export function passwordResetMail(content: StaffLinkContent, t: Translator = translator('en')): RenderedMail {
  return staffLinkMail(
    {
      subject: 'email.passwordReset.subject',
      opening: 'email.passwordReset.opening',
      action: 'email.passwordReset.action',
    },
    content,
    t,
  );
}
