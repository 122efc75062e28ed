import nodemailer from 'nodemailer';

/** One message handed to the SMTP server. */
export interface OutgoingMail {
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** A stable Message-ID, so a message sent twice (a retry after a crash) can be recognised as one. */
  readonly messageId: string;
}

/** Sends mail. */
export interface MailTransport {
  /**
   * Hands the message to the server. Resolves once the server has accepted it; rejects with the
   * server's or the network's error (an SMTP reply code in `responseCode` when there was one).
   */
  send(mail: OutgoingMail): Promise<void>;
}

/**
 * Waits, in milliseconds, well under the outbox claim (mail.service.ts) so an attempt ends, one way
 * or the other, before another attempt may take its message over.
 */
const CONNECTION_TIMEOUT_MS = 15_000;
const GREETING_TIMEOUT_MS = 15_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * An SMTP transport over `url` (`smtp://[user:pass@]host:port`, or `smtps://` for implicit TLS;
 * nodemailer upgrades plain connections with STARTTLS when the server offers it). One connection per
 * message, no pool: nothing stays open between deliveries, so shutting down needs no extra step.
 * Returns the transport; throws nothing until a message is sent.
 */
export function createSmtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport({
    url,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  return {
    async send(mail) {
      await transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
      });
    },
  };
}

/** Returns the SMTP reply code of a failed send, or undefined when the server gave none. */
export function smtpResponseCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' ? code : undefined;
}
