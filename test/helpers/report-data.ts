/**
 * Report data for rendering tests that call the PDF renderer directly, without a database: a
 * finished one-hour record-and-review session with nothing recorded and nothing reviewed.
 */
import type { SessionReportData } from '../../src/domain/reports/session-report.ts';

/** The report data of a session that started at `start` (ms) and ran one hour, generated at `start`. */
export function sessionReportData(start: number): SessionReportData {
  return {
    generatedAt: start,
    timeZone: 'Europe/Warsaw',
    institute: { id: 1, name: 'Uniwersytet Łódzki' },
    exam: { id: 2, name: 'Logic', type: 'record_review' },
    session: {
      id: 3,
      name: 'Łukasz Żółć',
      email: 'lukasz@example.org',
      attempt: 0,
      status: 'exam_finished',
      archived: false,
      reviewed: 'not_reviewed',
      externalId: null,
      studentId: null,
      lmsUserId: null,
      startTime: start,
      endTime: start + 3600_000,
      endReason: 'finished',
      recordingStartedAt: start,
      recordingEndedAt: start + 3600_000,
      operatingSystem: null,
      browser: null,
      browserVersion: null,
      bandwidthSpeed: null,
      transcodingStatus: 'not_sent_to_queue',
      checks: [],
    },
    photos: [],
    recordings: [],
    incidents: [],
    verdict: undefined,
    history: [],
  };
}
