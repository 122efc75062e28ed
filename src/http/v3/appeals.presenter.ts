import type { AppealWithVerdict } from '../../domain/appeals/appeal.ts';
import { isoTime } from '../time.ts';

/**
 * The V3 appeal record (docs/appeals.md): `{status, statement, submitted_at, decided_by,
 * decided_at, comment, appealed_verdict, files}`; `decided_by` is `{id, name}` or null while open.
 */
export function presentAppealV3(found: AppealWithVerdict): Record<string, unknown> {
  const { appeal } = found;
  return {
    student_session_id: appeal.studentSessionId,
    status: appeal.status,
    statement: appeal.statement,
    submitted_at: isoTime(appeal.submittedAt),
    decided_by: appeal.decidedBy === null ? null : { id: appeal.decidedBy, name: appeal.decidedByName },
    decided_at: isoTime(appeal.decidedAt),
    comment: appeal.comment,
    appealed_verdict: found.appealed?.verdict ?? null,
    appealed_review_id: appeal.reviewId,
    decision_review_id: appeal.decisionReviewId,
    files: appeal.files.map((file, index) => {
      const link = found.fileLinks[index] ?? null;
      return {
        file_name: file.fileName,
        content_type: file.contentType,
        size: file.size,
        url: link?.url ?? null,
        expires_at: isoTime(link?.expiresAt ?? null),
      };
    }),
  };
}
