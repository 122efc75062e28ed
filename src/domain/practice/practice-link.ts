import crypto from 'node:crypto';

/**
 * The public practice link of a `demo` exam (docs/practice.md): `{PUBLIC_URL}/practice/exam/<key>`,
 * the key being the exam's id, a dot and an HMAC of it, so a link can be put on a website without
 * letting anyone walk the exam ids. The HMAC key is the server's URL-signing key; the signed text
 * names its purpose, so no other signature of the server can stand in for it.
 */

/** Characters of the signature kept (hex): 128 bits. */
const SIGNATURE_HEX = 32;

function signature(secret: Buffer, examId: number): string {
  return crypto
    .createHmac('sha256', secret)
    .update(`invigil-practice-exam:${examId}`)
    .digest('hex')
    .slice(0, SIGNATURE_HEX);
}

/** Returns the key of exam `examId`'s public practice link. */
export function practiceExamKey(secret: Buffer, examId: number): string {
  return `${examId}.${signature(secret, examId)}`;
}

/** Returns `{publicUrl}/practice/exam/<key>`. */
export function practiceExamUrl(publicUrl: string, secret: Buffer, examId: number): string {
  return `${publicUrl}/practice/exam/${practiceExamKey(secret, examId)}`;
}

/** The exam id a practice link's key names, or undefined when it is not one the server signed. */
export function readPracticeExamKey(secret: Buffer, key: string): number | undefined {
  const match = /^([1-9]\d{0,14})\.([0-9a-f]{32})$/.exec(key);
  if (match === null) return undefined;
  const examId = Number(match[1]);
  const expected = Buffer.from(signature(secret, examId), 'utf8');
  const given = Buffer.from(match[2] ?? '', 'utf8');
  return expected.length === given.length && crypto.timingSafeEqual(expected, given) ? examId : undefined;
}

/** Returns `{publicUrl}/room/<token>/practice`, a registered candidate's practice page. */
export function practicePageUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/room/${token}/practice`;
}
