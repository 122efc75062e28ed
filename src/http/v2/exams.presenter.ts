import type { Exam } from '../../domain/exams/exam.ts';
import { epochSeconds } from '../time.ts';
import { simpleFormat } from './html.ts';

/** The V2 exam record: `exam_id`, epoch seconds, `duration` and `upload_exam` names, restrictions as HTML. */
export function presentExamV2(exam: Exam): Record<string, unknown> {
  return {
    exam_id: exam.id,
    name: exam.name,
    start_time: epochSeconds(exam.startTime),
    end_time: epochSeconds(exam.endTime),
    duration: exam.durationMinutes,
    upload_exam: exam.uploadAnswers,
    restrictions: simpleFormat(exam.restrictions),
    type: exam.type,
    mobile_cam: exam.mobileCam,
    user_id: exam.userId,
    institute_id: exam.instituteId,
    for_reviewing: exam.forReviewing,
    use_duration: exam.useDuration,
  };
}
