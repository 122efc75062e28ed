import type { StudentSession } from '../../domain/student-sessions/student-session.ts';
import { epochSeconds } from '../time.ts';

/**
 * The V2 student session record (api.md), times in epoch seconds. `token` builds the room link;
 * `send_emails` will add `use_duration` when it exists.
 */
export function presentStudentSessionV2(session: StudentSession): Record<string, unknown> {
  return {
    // V2 calls the session's own id `student_id`: the value delete_student takes as student_session_id.
    student_id: session.id,
    name: session.name,
    email: session.email,
    attempt: session.attempt,
    exam_id: session.examId,
    status: session.status,
    individual_info: session.individualInfo,
    is_individual_info_html: session.isIndividualInfoHtml,
    open_time: epochSeconds(session.openTime),
    start_time: epochSeconds(session.startTime),
    end_time: epochSeconds(session.endTime),
    token: session.token,
  };
}
