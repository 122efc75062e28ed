/**
 * Filing an incident from the console: "Add incident at playhead" (or "now", while the exam runs) on
 * the review screen and "Add incident" in the proctor wall's enlarged view. The comment is required;
 * the service judges the rest. One API call.
 */
import { api, problem } from './api';
import type { StudentRecord } from './students';

/** The session as the service holds it with the new incident, or the sentence saying why not. */
export type IncidentResult = { readonly student: StudentRecord } | { readonly error: string };

/**
 * Files an incident of session `sessionId` at `offset` seconds of its clock, with `comment` (trimmed).
 * Returns the session with the incident, or an error sentence saying what to do: for an empty comment
 * (the service is not asked), a refusal (the service's reason) or a service out of reach. Throws
 * nothing.
 */
export async function addIncident(
  sessionId: number,
  comment: string,
  offset: number,
): Promise<IncidentResult> {
  const text = comment.trim();
  if (text === '') return { error: 'Write what you saw, then add the incident.' };
  try {
    const {
      data,
      error: failure,
      response,
    } = await api.POST('/api/v3/student_sessions/{id}/incidents', {
      params: { path: { id: sessionId } },
      body: { comment: text, offset_time: offset },
    });
    if (data === undefined) return { error: `The incident was not added. ${problem(failure, response)}` };
    return { student: data.student };
  } catch {
    return {
      error:
        'The incident was not added: the service could not be reached. Check your connection and try again.',
    };
  }
}
