import type { StudentSession } from '../../domain/student-sessions/student-session.ts';
import { epochSeconds } from '../time.ts';

/**
 * The V2 student session record (api.md), times in epoch seconds. `token` builds the room link;
 * `send_emails` answers it with `use_duration` added (presentEmailedStudentV2).
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

/**
 * The V2 record of a student `send_emails` has just emailed: the V2 record plus `use_duration`, which
 * api.md adds to this answer only. Returns it.
 */
export function presentEmailedStudentV2(session: StudentSession): Record<string, unknown> {
  return { ...presentStudentSessionV2(session), use_duration: session.useDuration };
}
