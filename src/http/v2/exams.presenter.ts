import type { Exam } from '../../domain/exams/exam.ts';
import { epochSeconds } from '../time.ts';
import { simpleFormat } from './html.ts';

/** The V2 exam record: `exam_id`, epoch seconds, `duration` and `upload_exam` names, restrictions as HTML. */
export function presentExamV2(exam: Exam): Record<string, unknown> {
  return {
    // V2 clients written against the Rails service read the id as `exam_id` (create answers `id`).
    exam_id: exam.id,
    name: exam.name,
    // Whole epoch seconds, as V2 clients built on the Rails service expect (V3: ISO 8601).
    start_time: epochSeconds(exam.startTime),
    end_time: epochSeconds(exam.endTime),
    // V2's names for V3's duration_minutes and upload_answers.
    duration: exam.durationMinutes,
    upload_exam: exam.uploadAnswers,
    // HTML (Rails simple_format), as V2 clients built on the Rails service receive it.
    restrictions: simpleFormat(exam.restrictions),
    type: exam.type,
    mobile_cam: exam.mobileCam,
    user_id: exam.userId,
    institute_id: exam.instituteId,
    for_reviewing: exam.forReviewing,
    use_duration: exam.useDuration,
  };
}
