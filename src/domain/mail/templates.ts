import { escapeHtml, htmlToText, individualInfoHtml } from '../../security/html.ts';

/**
 * The emails Invigil sends, each rendered once, when it is written to the outbox, as a subject, a
 * plain-text part and an HTML part. Everything a user typed (names, the exam's name, a student's
 * individual information) is HTML-escaped in the HTML part; individual information flagged as HTML
 * is sanitised to a small allow-list instead. English only for now: the institute's
 * `default_language` does not select a template yet (docs/mail.md).
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

/** The time window as one sentence, or undefined when the exam sets none. */
function windowSentence(
  from: number | null,
  until: number | null,
  zone: string | null | undefined,
): string | undefined {
  const time = (millis: number) => formatZonedTime(millis, zone);
  if (from !== null && until !== null) return `You may start from ${time(from)} until ${time(until)}.`;
  if (from !== null) return `You may start from ${time(from)}.`;
  if (until !== null) return `You may start at any time until ${time(until)}.`;
  return undefined;
}

/**
 * What the student needs for this exam, one sentence each, from the exam's settings: always a
 * computer with a browser the room supports; camera and microphone (and an ID card) when the webcam
 * is recorded; screen sharing when the screen is; a phone when a mobile camera is used; a steady
 * connection when anything is recorded; answer files when answers are uploaded. Returns them.
 */
export function needsList(needs: ExamNeeds): string[] {
  const recorded = needs.webCam || needs.screenShare || needs.mobileCam;
  const list = [
    'A computer (desktop or laptop) with a current Google Chrome, Microsoft Edge or Mozilla Firefox. Phones and tablets cannot run the exam room.',
  ];
  if (needs.webCam) {
    list.push('A camera and a microphone: both are recorded while you work.');
    list.push(
      'An identity card with your photo: the room takes a picture of it and of your face before you start.',
    );
  }
  if (needs.screenShare)
    list.push('Permission for the browser to share your entire screen: it is recorded while you work.');
  if (needs.mobileCam) {
    list.push('A phone with a camera, set up as a second camera as your exam office explains.');
  }
  if (recorded) list.push('A steady internet connection (at least 1 Mbit/s).');
  if (needs.uploadAnswers)
    list.push(
      'Your answers as files (PDF, images, text, zip or office documents): you upload them in the exam room.',
    );
  return list;
}

/** The sentence after the list: how the room checks the equipment first, when it records anything. */
function checkSentence(needs: ExamNeeds): string | undefined {
  if (!(needs.webCam || needs.screenShare || needs.mobileCam)) return undefined;
  return 'Open the link a little early: before you start, the exam room checks your equipment, which takes a few minutes.';
}

function durationSentence(minutes: number | null): string | undefined {
  if (minutes === null) return undefined;
  return `Once started, you have ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

function page(subject: string, body: string): string {
  return [
    '<!DOCTYPE html>',
    '<html>',
    '<head><meta charset="utf-8"><title>' + escapeHtml(subject) + '</title></head>',
    '<body style="font-family: sans-serif; line-height: 1.5; color: #222;">',
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * The exam-link email: the room address, the exam's name, the time window (in the exam's time zone,
 * named, and UTC) and duration, what the student needs (from the exam's settings), and the
 * student's individual information. Returns the rendered message; throws nothing.
 */
export function examLinkMail(content: ExamLinkContent): RenderedMail {
  const subject = oneLine(`Your exam link: ${content.examName}`);
  const when = windowSentence(content.from, content.until, content.timeZone);
  const duration = durationSentence(content.durationMinutes);
  const needs = needsList(content.needs);
  const check = checkSentence(content.needs);
  const info =
    content.individualInfo === null || content.individualInfo.trim() === '' ? null : content.individualInfo;
  const infoHtml = individualInfoHtml(info, content.individualInfoIsHtml);
  const infoText = info === null ? null : content.individualInfoIsHtml ? htmlToText(info) : info;

  const text = [
    `Hello ${content.studentName},`,
    '',
    `you are registered for the exam "${content.examName}".`,
    ...(when === undefined ? [] : ['', when]),
    ...(duration === undefined ? [] : [duration]),
    '',
    'What you need:',
    ...needs.map((need) => `- ${need}`),
    ...(check === undefined ? [] : ['', check]),
    '',
    'Open your exam room with this link:',
    content.roomUrl,
    ...(infoText === null || infoText === '' ? [] : ['', 'Information for you:', infoText]),
    '',
    'The link is personal: do not share it.',
    '',
  ].join('\n');

  const html = page(
    subject,
    [
      `<p>Hello ${escapeHtml(content.studentName)},</p>`,
      `<p>you are registered for the exam <strong>${escapeHtml(content.examName)}</strong>.</p>`,
      ...(when === undefined && duration === undefined
        ? []
        : [`<p>${[when, duration].filter((part) => part !== undefined).join('<br>\n')}</p>`]),
      '<p>What you need:</p>',
      `<ul>\n${needs.map((need) => `<li>${escapeHtml(need)}</li>`).join('\n')}\n</ul>`,
      ...(check === undefined ? [] : [`<p>${escapeHtml(check)}</p>`]),
      `<p><a href="${escapeHtml(content.roomUrl)}">Open your exam room</a><br>`,
      `${escapeHtml(content.roomUrl)}</p>`,
      ...(infoHtml === null ? [] : ['<p>Information for you:</p>', `<div>${infoHtml}</div>`]),
      '<p>The link is personal: do not share it.</p>',
    ].join('\n'),
  );
  return { subject, text, html };
}

/**
 * The notification that a student's exam session was ended (end_exam). Returns the rendered message;
 * throws nothing.
 */
export function examEndedMail(content: ExamEndedContent): RenderedMail {
  const subject = oneLine(`Your exam has ended: ${content.examName}`);
  const ended = formatTime(content.endedAt);
  const text = [
    `Hello ${content.studentName},`,
    '',
    `your session of the exam "${content.examName}" was ended at ${ended}.`,
    'Your recordings have stopped, and nothing more is needed from you.',
    '',
  ].join('\n');
  const html = page(
    subject,
    [
      `<p>Hello ${escapeHtml(content.studentName)},</p>`,
      `<p>your session of the exam <strong>${escapeHtml(content.examName)}</strong> was ended at ${ended}.</p>`,
      '<p>Your recordings have stopped, and nothing more is needed from you.</p>',
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

function staffLinkMail(
  subject: string,
  opening: string,
  action: string,
  content: StaffLinkContent,
): RenderedMail {
  const until = formatTime(content.expiresAt);
  const text = [
    `Hello ${content.name},`,
    '',
    opening,
    '',
    `${action}:`,
    content.url,
    '',
    `The link works once, until ${until}. Your sign-in email is ${content.email}.`,
    '',
  ].join('\n');
  const html = page(
    subject,
    [
      `<p>Hello ${escapeHtml(content.name)},</p>`,
      `<p>${escapeHtml(opening)}</p>`,
      `<p><a href="${escapeHtml(content.url)}">${escapeHtml(action)}</a><br>`,
      `${escapeHtml(content.url)}</p>`,
      `<p>The link works once, until ${until}. Your sign-in email is ${escapeHtml(content.email)}.</p>`,
    ].join('\n'),
  );
  return { subject: oneLine(subject), text, html };
}

/** The invitation of a staff user to choose a password. Returns the rendered message; throws nothing. */
export function staffInvitationMail(content: StaffLinkContent): RenderedMail {
  return staffLinkMail(
    'You are invited to Invigil',
    'an account was made for you in Invigil, the proctored exam service.',
    'Choose your password',
    content,
  );
}

/** The link to choose a new password after "forgot password". Returns the rendered message; throws nothing. */
export function passwordResetMail(content: StaffLinkContent): RenderedMail {
  return staffLinkMail(
    'Choose a new Invigil password',
    'someone (we hope you) asked to choose a new password for your Invigil account. If it was not you, ignore this email: your password stays as it is.',
    'Choose a new password',
    content,
  );
}
