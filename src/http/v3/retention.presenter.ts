import type { KindPurge, KindRetention, LegalHold, Purge } from '../../domain/retention/retention.ts';
import { isoTime } from '../time.ts';

/** The V3 record of a kind retention purged of a session. */
export function presentKindPurgeV3(purge: KindPurge): Record<string, unknown> {
  return {
    kind: purge.kind,
    rule: purge.rule,
    days: purge.days,
    purged_at: isoTime(purge.purgedAt),
    id_checked: purge.idCheck !== null,
    id_checked_by: purge.idCheck?.checkedBy ?? null,
    id_checked_by_name: purge.idCheck?.checkedByName ?? null,
    id_checked_at: isoTime(purge.idCheck?.checkedAt ?? null),
  };
}

/** The V3 record of one kind's retention at an institute. */
export function presentRetentionPolicyV3(retention: KindRetention): Record<string, unknown> {
  return {
    kind: retention.kind,
    days: retention.days,
    setting: retention.setting ?? null,
    is_default: retention.setting === undefined,
    default_days: retention.defaultDays,
    follows_session_period: retention.followsSessionPeriod,
    after_final_verdict_hours: retention.afterFinalVerdictHours,
    rule: retention.rule,
  };
}

/** The V3 legal-hold record, with what retention purged of the session (`purged`). */
export function presentLegalHoldV3(hold: LegalHold, purged: readonly KindPurge[]): Record<string, unknown> {
  return {
    student_session_id: hold.studentSessionId,
    held: hold.held,
    reason: hold.reason,
    set_by: hold.setBy,
    set_at: isoTime(hold.setAt),
    media_purged_at: isoTime(hold.mediaPurgedAt),
    purged_kinds: purged.map(presentKindPurgeV3),
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
    rule: purge.rule,
    purged_at: isoTime(purge.purgedAt),
  };
}
