import type { Institute } from '../../domain/institutes/institute.ts';
import { isoTime } from '../time.ts';

/** The V3 institute record (contract §6). */
export function presentInstituteV3(institute: Institute): Record<string, unknown> {
  return {
    id: institute.id,
    name: institute.name,
    short_name: institute.shortName,
    callback_url: institute.callbackUrl,
    check_requirements_emails_enabled: institute.checkRequirementsEmailsEnabled,
    reminder_emails_enabled: institute.reminderEmailsEnabled,
    exam_link_emails_enabled: institute.examLinkEmailsEnabled,
    exam_changed_emails_enabled: institute.examChangedEmailsEnabled,
    exam_finalized_emails_enabled: institute.examFinalizedEmailsEnabled,
    session_retention_period: institute.sessionRetentionPeriod,
    default_language: institute.defaultLanguage,
    require_second_factor_for_administrators: institute.requireSecondFactorForAdministrators,
    second_review_required: institute.secondReviewRequired,
    privacy_contact: institute.privacyContact,
    dpo_name: institute.dpoName,
    dpo_email: institute.dpoEmail,
    appeal_period_days: institute.appealPeriodDays,
    created_at: isoTime(institute.createdAt),
    updated_at: isoTime(institute.updatedAt),
  };
}
