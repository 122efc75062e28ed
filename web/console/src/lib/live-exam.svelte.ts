/**
 * Whether an exam is live proctored (its type is `live_proctoring`), for the exam tabs' "Live" tab.
 * Each exam screen's tabs ask again when they appear, so a changed type shows on the next screen;
 * until the first answer the tab is left out.
 */
import { api } from './api';

const live = $state<Record<string, boolean>>({});

/** True when the exam is known to be live proctored (false while unknown or for another type). */
export function isLiveProctored(examId: number | string): boolean {
  return live[String(examId)] === true;
}

/** Asks the service for the exam's type; an exam the user may not read stays not live. Throws nothing. */
export async function checkLiveProctored(examId: number | string): Promise<void> {
  const id = Number(examId);
  if (!Number.isSafeInteger(id) || id <= 0) return;
  try {
    const { data } = await api.GET('/api/v3/exams/{id}', { params: { path: { id } } });
    if (data !== undefined) live[String(id)] = data.exam.type === 'live_proctoring';
  } catch {
    // Offline: the tab keeps what was known.
  }
}

/** Records an exam's type already read by a screen (saves the tabs a request's wait). */
export function learnExamType(examId: number | string, type: string): void {
  live[String(examId)] = type === 'live_proctoring';
}
