import type { Config } from '../../config/config.ts';
import type { Exam } from '../../domain/exams/exam.ts';
import { practiceExamUrl } from '../../domain/practice/practice-link.ts';
import { loadServerKeys } from '../../security/keys.ts';

/** The signing key per server key source: read once, as loading it touches the disk. */
const secrets = new Map<string, Buffer>();

function secretOf(config: Pick<Config, 'serverSecret' | 'dataDir'>): Buffer {
  const source = `${config.serverSecret ?? ''}\u0000${config.dataDir}`;
  let secret = secrets.get(source);
  if (secret === undefined) {
    secret = loadServerKeys(config.serverSecret, config.dataDir).urlSigning;
    secrets.set(source, secret);
  }
  return secret;
}

/**
 * The public practice link of a `demo` exam (docs/practice.md, "A demo exam as a standing practice
 * exam"), for the V3 exam record's `practice_url`: `{PUBLIC_URL}/practice/exam/<id>.<signature>`.
 * Returns null for an exam of another type. Throws only when the server key cannot be read.
 */
export function demoPracticeUrl(
  config: Pick<Config, 'publicUrl' | 'serverSecret' | 'dataDir'>,
  exam: Pick<Exam, 'id' | 'type'>,
): string | null {
  return exam.type === 'demo' ? practiceExamUrl(config.publicUrl, secretOf(config), exam.id) : null;
}
