/**
 * Filing an incident from the console: "Add incident at playhead" (or "now", while the exam runs) on
 * the review screen and "Add incident" in the proctor wall's enlarged view. The comment is required;
 * the service judges the rest. One API call. Also dismissing and restoring an automatic flag from the
 * review screen.
 */
import { t } from '../../../shared/i18n.svelte.ts';
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
  if (text === '') return { error: t('console.incidents.empty') };
  try {
    const {
      data,
      error: failure,
      response,
    } = await api.POST('/api/v3/student_sessions/{id}/incidents', {
      params: { path: { id: sessionId } },
      body: { comment: text, offset_time: offset },
    });
    if (data === undefined)
      return { error: t('console.incidents.notAdded', { reason: problem(failure, response) }) };
    return { student: data.student };
  } catch {
    return { error: t('console.incidents.notAddedUnreachable') };
  }
}

/** One incident as the session record lists it (and the dismiss routes answer it). */
export type IncidentRecord = StudentRecord['incidents'][number];

/** The flag as the service now holds it, or the sentence saying why not. */
export type DismissResult = { readonly incident: IncidentRecord } | { readonly error: string };

/**
 * Dismisses (`dismissed` true: POST …/dismiss) or restores (false: DELETE …/dismiss) the automatic
 * flag `incidentId` of session `sessionId`. Returns the incident as the service now holds it, or an
 * error sentence saying what to do: a refusal (the service's reason) or a service out of reach.
 * Throws nothing.
 */
export async function setFlagDismissed(
  sessionId: number,
  incidentId: number,
  dismissed: boolean,
): Promise<DismissResult> {
  const options = { params: { path: { id: sessionId, incident_id: incidentId } } };
  const path = '/api/v3/student_sessions/{id}/incidents/{incident_id}/dismiss';
  try {
    const {
      data,
      error: failure,
      response,
    } = dismissed ? await api.POST(path, { ...options, body: {} }) : await api.DELETE(path, options);
    if (data === undefined) {
      const reason = problem(failure, response);
      return {
        error: dismissed
          ? t('console.incidents.notDismissed', { reason })
          : t('console.incidents.notRestored', { reason }),
      };
    }
    return { incident: data.incident };
  } catch {
    return {
      error: dismissed
        ? t('console.incidents.notDismissedUnreachable')
        : t('console.incidents.notRestoredUnreachable'),
    };
  }
}
