/**
 * The practice page's calls (docs/practice.md): the room's view for the exam and the language, the
 * practice run's routes, and the visitor's session of a demo exam's public link. Each returns the
 * answer's body or throws ApiError with the status (0: the server could not be reached).
 */
import { ApiError, errorOf, requestJson } from '../shared/http.ts';

/** The checks a practice run can try (src/domain/practice/practice.ts PRACTICE_CHECKS). */
export type PracticeCheck =
  | 'webcam'
  | 'microphone'
  | 'screen_share'
  | 'mobile'
  | 'bandwidth'
  | 'id_photo'
  | 'face_photo'
  | 'webcam_recording'
  | 'screen_recording';

export type PracticeOutcome = 'succeeded' | 'failed' | 'skipped';

/** A practice run as the API answers it. */
export interface PracticeRun {
  readonly id: number;
  readonly status: 'running' | 'passed' | 'failed';
  readonly failed_check: string | null;
  readonly required_checks: readonly PracticeCheck[];
  readonly checks: Partial<Record<PracticeCheck, PracticeOutcome>>;
  readonly sources: readonly ('webcam' | 'screen')[];
  readonly recording_seconds: number;
}

/** What the page reads of the room's view. */
export interface PracticeRoom {
  readonly examName: string;
  readonly status: string;
  readonly overrides: Readonly<Record<string, Record<string, string>>>;
}

async function call(
  url: string,
  method: string,
  body?: Record<string, unknown> | FormData,
): Promise<unknown> {
  let answer;
  try {
    answer = await requestJson(url, method, body);
  } catch (error) {
    throw new ApiError(0, error instanceof Error ? error.message : String(error));
  }
  if (!answer.ok) throw new ApiError(answer.status, errorOf(answer.json, `HTTP ${answer.status}`));
  return answer.json;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function runOf(json: unknown): PracticeRun {
  return record(json).practice_run as PracticeRun;
}

/** The token of the page's address: `/room/<token>/practice`, or undefined on a demo exam's link. */
export function tokenOfPath(pathname: string): { token: string } | { key: string } | undefined {
  const room = /^\/room\/([^/]+)\/practice\/?$/.exec(pathname);
  if (room?.[1] !== undefined) return { token: decodeURIComponent(room[1]) };
  const demo = /^\/practice\/exam\/([^/]+)\/?$/.exec(pathname);
  if (demo?.[1] !== undefined) return { key: decodeURIComponent(demo[1]) };
  return undefined;
}

/** A visitor's throwaway session of a demo exam's public link. Returns its token. */
export async function visitorToken(key: string): Promise<string> {
  const json = await call(`/api/room/practice/exam/${encodeURIComponent(key)}`, 'POST');
  return String(record(json).token);
}

/** The exam's name, the session's status and the institute's wording, from the room's view. */
export async function roomOf(token: string): Promise<PracticeRoom> {
  const view = record(await call(`/api/room/${encodeURIComponent(token)}`, 'GET'));
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    examName: text(record(view.exam).name),
    status: text(record(view.session).status),
    overrides: record(view.message_overrides) as PracticeRoom['overrides'],
  };
}

/** The practice routes of one token. */
export function practiceApi(token: string) {
  const base = `/api/room/${encodeURIComponent(token)}/practice`;
  return {
    begin: async () => runOf(await call(base, 'POST')),
    checks: async (run: number, outcomes: Partial<Record<PracticeCheck, PracticeOutcome>>) =>
      runOf(await call(`${base}/${run}/checks`, 'PUT', outcomes)),
    photo: async (run: number, image: Blob) => {
      const form = new FormData();
      form.append('file', image, 'practice.png');
      return runOf(await call(`${base}/${run}/photo`, 'POST', form));
    },
    chunk: async (run: number, source: 'webcam' | 'screen', sequence: number, data: Blob) => {
      const form = new FormData();
      form.append('sequence', String(sequence));
      form.append('source', source);
      form.append('file', data, `${source}-${sequence}.webm`);
      await call(`${base}/${run}/recording`, 'POST', form);
    },
    finish: async (run: number) => runOf(await call(`${base}/${run}/finish`, 'POST')),
  };
}
