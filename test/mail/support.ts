/**
 * Mail test machinery: a real SMTP server in process (smtp-server on a loopback port) that collects
 * what it receives, a small reader for the MIME messages nodemailer writes, and a worker driver for
 * test servers (which run no worker of their own).
 */
import pino, { type Logger } from 'pino';
import { SMTPServer } from 'smtp-server';
import { createWorker } from '../../src/jobs/worker.ts';
import type { Clock } from '../../src/domain/clock.ts';
import type { DialectName, TestServer } from '../helpers/server.ts';

/** A loopback port nothing listens on right now (for "the server is not up yet"). */
export { freePort } from '../helpers/processes.ts';

/** A message as the SMTP server received it, with its parts decoded. */
export interface ReceivedMail {
  readonly envelopeFrom: string;
  readonly envelopeTo: readonly string[];
  readonly headers: ReadonlyMap<string, string>;
  readonly subject: string;
  readonly from: string;
  readonly to: string;
  readonly messageId: string;
  /** The text/plain part, decoded. */
  readonly text: string | undefined;
  /** The text/html part, decoded. */
  readonly html: string | undefined;
  readonly raw: string;
}

/** How the server answers: accept, refuse for now (451, temporary) or for good (550). */
export type SmtpMode = 'accept' | 'tempfail' | 'reject';

export interface TestSmtpServer {
  readonly port: number;
  readonly url: string;
  readonly messages: ReceivedMail[];
  mode: SmtpMode;
  close(): Promise<void>;
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

/**
 * Starts an SMTP server on 127.0.0.1 (`port`, or a random one): no TLS, no authentication. It
 * refuses recipients while `mode` says so and records every message it accepts. Returns it.
 */
export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const state: { mode: SmtpMode } = { mode: 'accept' };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (state.mode === 'tempfail') return callback(smtpError('Try again later', 451));
      if (state.mode === 'reject') return callback(smtpError('No such mailbox', 550));
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mailFrom = session.envelope.mailFrom;
        messages.push(
          readMessage(
            raw,
            mailFrom === false ? '' : mailFrom.address,
            session.envelope.rcptTo.map((rcpt) => rcpt.address),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('no SMTP port');
  return {
    port: address.port,
    url: `smtp://127.0.0.1:${address.port}`,
    messages,
    get mode() {
      return state.mode;
    },
    set mode(value: SmtpMode) {
      state.mode = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- A small MIME reader (enough for what nodemailer writes) ----

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function decodeQuotedPrintable(text: string): string {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let index = 0; index < soft.length; index += 1) {
    const hex = soft.slice(index + 1, index + 3);
    if (soft[index] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(...Buffer.from(soft[index] ?? '', 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(body: string, encoding: string | undefined): string {
  const kind = (encoding ?? '7bit').toLowerCase();
  if (kind === 'quoted-printable') return decodeQuotedPrintable(body);
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?UTF-8?B?...?=`) in a header value. */
export function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([BbQq])\?([^?]*)\?=/g, (_match, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const match = /\r?\n\r?\n/.exec(raw);
  if (match === null) return { headers: parseHeaders(raw), body: '' };
  return { headers: parseHeaders(raw.slice(0, match.index)), body: raw.slice(match.index + match[0].length) };
}

/** Collects the decoded text/plain and text/html parts of a MIME entity. */
function collectParts(raw: string, into: { text?: string; html?: string }): void {
  const { headers, body } = splitEntity(raw);
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith('multipart/') && boundary !== undefined) {
    const pieces = body.split(`--${boundary}`);
    for (const piece of pieces.slice(1)) {
      if (piece.startsWith('--')) break;
      collectParts(piece.replace(/^\r?\n/, ''), into);
    }
    return;
  }
  // SMTP carries lines as CRLF; the parts are compared with the LF text the templates wrote.
  const decoded = decodeBody(body, headers.get('content-transfer-encoding')).replace(/\r\n/g, '\n');
  if (type.toLowerCase().startsWith('text/html')) into.html = decoded;
  else if (type.toLowerCase().startsWith('text/plain')) into.text = decoded;
}

/** Reads a raw message. Returns its headers and decoded parts. */
export function readMessage(raw: string, envelopeFrom: string, envelopeTo: readonly string[]): ReceivedMail {
  const { headers } = splitEntity(raw);
  const parts: { text?: string; html?: string } = {};
  collectParts(raw, parts);
  return {
    envelopeFrom,
    envelopeTo,
    headers,
    subject: decodeWords(headers.get('subject') ?? ''),
    from: decodeWords(headers.get('from') ?? ''),
    to: decodeWords(headers.get('to') ?? ''),
    messageId: headers.get('message-id') ?? '',
    text: parts.text,
    html: parts.html,
    raw,
  };
}

// ---- Driving delivery ----

/**
 * Runs every due job of the test server with a worker of its own handlers, one at a time, until none
 * is due (a retry waiting out its backoff is not due). Returns how many attempts ran.
 */
export async function runDueJobs(server: TestServer, dialect: DialectName, clock: Clock): Promise<number> {
  const worker = createWorker({
    db: server.app.database.db,
    dialect,
    clock,
    logger: pino({ level: 'silent' }),
    handlers: server.app.jobHandlers,
  });
  let ran = 0;
  while (await worker.runOnce()) {
    ran += 1;
    if (ran > 10_000) throw new Error('jobs kept coming');
  }
  return ran;
}

/** A pino logger at info that keeps every line it writes, parsed. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, lines };
}

/** The outbox rows of a test server, oldest first. */
export function outboxRows(server: TestServer) {
  return server.app.database.db.selectFrom('outbox').selectAll().orderBy('id').execute();
}

/** The mail.deliver jobs of a test server, oldest first. */
export function mailJobs(server: TestServer) {
  return server.app.database.db
    .selectFrom('jobs')
    .selectAll()
    .where('kind', '=', 'mail.deliver')
    .orderBy('id')
    .execute();
}
