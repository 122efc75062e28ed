import { EXAM_FLAGS, EXAM_TEXTS, type Exam, examMode, isPublished } from '../../domain/exams/exam.ts';
import { effectiveFlagSettings } from '../../domain/flags/settings.ts';
import { isoTime } from '../time.ts';

/**
 * The V3 exam record (contract §6, docs/api-v3-exams.md): every stored setting, and the fields
 * clients of the original service read that derive from `type` and `status` (`mode`,
 * `live_proctoring`, `published`), and `flag_settings` as in force (defaults filled in). Returns it
 * as a plain object, with `practice_url`, a demo exam's public practice link (docs/practice.md), or
 * null.
 */
export function presentExamV3(exam: Exam, practiceUrl: string | null = null): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: exam.id,
    institute_id: exam.instituteId,
    user_id: exam.userId,
    name: exam.name,
    type: exam.type,
    mode: examMode(exam.type),
    live_proctoring: exam.type === 'live_proctoring',
    status: exam.status,
    published: isPublished(exam),
    duration_minutes: exam.durationMinutes,
    start_time: isoTime(exam.startTime),
    end_time: isoTime(exam.endTime),
    exam_language: exam.examLanguage,
    candidate_languages: exam.candidateLanguages,
    timezone: exam.timezone,
    recording_quality: exam.recordingQuality,
  };
  for (const [key, field] of Object.entries(EXAM_FLAGS)) record[field] = exam[key as keyof typeof EXAM_FLAGS];
  for (const [key, field] of Object.entries(EXAM_TEXTS)) record[field] = exam[key as keyof typeof EXAM_TEXTS];
  // The thresholds in force, defaults filled in, whether or not the exam set any.
  record.flag_settings = effectiveFlagSettings(exam.flagSettings);
  record.comanager_ids = exam.comanagerIds;
  record.practice_url = practiceUrl;
  record.created_at = isoTime(exam.createdAt);
  record.updated_at = isoTime(exam.updatedAt);
  return record;
}
