import { escapeHtml, htmlToText, individualInfoHtml } from '../security/html.ts';

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
  readonly individualInfo: string | null;
  readonly individualInfoIsHtml: boolean;
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

/** The time window as one sentence, or undefined when the exam sets none. */
function windowSentence(from: number | null, until: number | null): string | undefined {
  if (from !== null && until !== null)
    return `You may start from ${formatTime(from)} until ${formatTime(until)}.`;
  if (from !== null) return `You may start from ${formatTime(from)}.`;
  if (until !== null) return `You may start at any time until ${formatTime(until)}.`;
  return undefined;
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
 * The exam-link email: the room address, the exam's name, the time window (and duration), and the
 * student's individual information. Returns the rendered message; throws nothing.
 */
export function examLinkMail(content: ExamLinkContent): RenderedMail {
  const subject = oneLine(`Your exam link: ${content.examName}`);
  const when = windowSentence(content.from, content.until);
  const duration = durationSentence(content.durationMinutes);
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
