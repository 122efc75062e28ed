import type { LegalHold, Purge } from '../../domain/retention/retention.ts';
import { isoTime } from '../time.ts';

/** The V3 legal-hold record. */
export function presentLegalHoldV3(hold: LegalHold): Record<string, unknown> {
  return {
    student_session_id: hold.studentSessionId,
    held: hold.held,
    reason: hold.reason,
    set_by: hold.setBy,
    set_at: isoTime(hold.setAt),
    media_purged_at: isoTime(hold.mediaPurgedAt),
  };
}

/** The V3 purge-log record. */
export function presentPurgeV3(purge: Purge): Record<string, unknown> {
  return {
    id: purge.id,
    institute_id: purge.instituteId,
    exam_id: purge.examId,
    student_session_id: purge.studentSessionId,
    kind: purge.kind,
    files: purge.files,
    bytes: purge.bytes,
    reason: purge.reason,
    retention_period: purge.retentionPeriod,
    purged_at: isoTime(purge.purgedAt),
  };
}
