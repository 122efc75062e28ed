/**
 * The proctor wall's rules that need no browser (docs/live-proctoring.md, "The proctor wall"): whose
 * candidates a user sees, the pages of the grid, what the connection figures mean, which incidents
 * and messages are new, and the exam clock an incident is filed at. Pure, so unit tests read them
 * with the same code as the console.
 */
// With its extension: node runs this file as it is in the unit tests (test/console/live-wall.test.ts).
import { t } from '../../../shared/i18n.svelte.ts';
import { administers, baseRole } from './roles.ts';
// The service's own type, erased from the bundle (and by node in the unit tests).
import type { LiveMessageJson } from '../../../../src/live/protocol.ts';

/** How many candidates one page of the grid shows; each fills a square grid (2×2 … 5×5). */
export const PAGE_SIZES = [4, 9, 16, 25] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

/** The page size a proctor sees before choosing one. */
export const DEFAULT_PAGE_SIZE: PageSize = 9;

/** Where the chosen page size is remembered (localStorage), across exams and visits. */
export const PAGE_SIZE_KEY = 'invigil.live-wall.page-size';

/** The storage the wall remembers things in (window.localStorage, or a stand-in in tests). */
export type WallStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** The page size kept in `storage`, or the default when none (or a value no longer offered) is kept. */
export function readPageSize(storage: WallStorage | undefined): PageSize {
  const kept = Number(safeGet(storage, PAGE_SIZE_KEY));
  return PAGE_SIZES.find((size) => size === kept) ?? DEFAULT_PAGE_SIZE;
}

/** Remembers `size` in `storage`; a full or refused storage is ignored (the choice holds for the visit). */
export function savePageSize(storage: WallStorage | undefined, size: PageSize): void {
  safeSet(storage, PAGE_SIZE_KEY, String(size));
}

/** The grid's columns for a page size (its square root). */
export function columnsOf(size: PageSize): number {
  return Math.round(Math.sqrt(size));
}

/** How many pages `total` candidates fill at `size` per page (at least one). */
export function pageCountOf(total: number, size: number): number {
  return Math.max(1, Math.ceil(total / size));
}

/** `page` moved into 1…pageCountOf(total, size): a page that emptied shows the last one left. */
export function clampPage(page: number, total: number, size: number): number {
  return Math.min(Math.max(1, Math.floor(page)), pageCountOf(total, size));
}

/** The items of page `page` (1-based) at `size` per page. */
export function pageOf<T>(items: readonly T[], page: number, size: number): T[] {
  const start = (clampPage(page, items.length, size) - 1) * size;
  return items.slice(start, start + size);
}

/** The facts about an exam that say who manages it (the V3 exam record's names). */
export interface ExamManagers {
  readonly user_id: number;
  readonly comanager_ids: readonly number[];
}

/**
 * Whether the user sees every candidate of the exam on the wall (an administrator, or a teacher who
 * owns or co-manages it), rather than only the sessions assigned to them. A courtesy, like every
 * role rule here: the live socket refuses what the user may not watch.
 */
export function seesEveryCandidate(role: string, userId: number, exam: ExamManagers): boolean {
  if (administers(role)) return true;
  return baseRole(role) === 'teacher' && (exam.user_id === userId || exam.comanager_ids.includes(userId));
}

/** What the wall needs of a session to place it. */
export interface WallCandidate {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly proctor_id: number | null;
}

/**
 * The candidates the wall shows, in a stable order (by name, then id) so a tile keeps its place as
 * statuses change: only those assigned to `userId` when `onlyMine`, finished ones left out when
 * `hideFinished`.
 */
export function wallCandidates<T extends WallCandidate>(
  sessions: Iterable<T>,
  filter: { readonly userId: number; readonly onlyMine: boolean; readonly hideFinished: boolean },
): T[] {
  return [...sessions]
    .filter((session) => !filter.onlyMine || session.proctor_id === filter.userId)
    .filter((session) => !filter.hideFinished || session.status !== 'exam_finished')
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}

/** The connection figures of one watched candidate, as the live client measures them. */
export interface FeedStats {
  readonly fps: number | null;
  readonly lossPercent: number | null;
  readonly rttMs: number | null;
}

export type QualityLevel = 'good' | 'fair' | 'poor' | 'unknown';

/** A candidate's connection quality: a level and the words a tile shows for it. */
export interface Quality {
  readonly level: QualityLevel;
  readonly words: string;
}

/**
 * How good a candidate's picture is from its figures: good at 12 fps or more with under 2% loss and
 * under 300 ms round trip; fair at 5 fps or more with under 8% loss and under 800 ms; poor below
 * that; unknown before the first frame rate is measured. Missing loss or round-trip figures count
 * as fine (LiveKit does not always give them). The words name the frame rate.
 */
export function qualityOf(stats: FeedStats): Quality {
  if (stats.fps === null || !Number.isFinite(stats.fps))
    return { level: 'unknown', words: t('console.liveWall.notMeasured') };
  const fps = Math.round(stats.fps);
  const loss = stats.lossPercent ?? 0;
  const rtt = stats.rttMs ?? 0;
  const level: QualityLevel =
    fps >= 12 && loss < 2 && rtt < 300 ? 'good' : fps >= 5 && loss < 8 && rtt < 800 ? 'fair' : 'poor';
  const words =
    loss >= 2
      ? t('console.liveWall.qualityLoss', { level, fps, loss: Math.round(loss) })
      : t('console.liveWall.quality', { level, fps });
  return { level, words };
}

/** A candidate's live status (the V3 record's `live_status`) in words, with a symbol beside them. */
export const LIVE_STATUS_WORDS = {
  offline: liveWords('console.liveWall.offline', '○'),
  connecting: liveWords('console.liveWall.connecting', '◐'),
  live: liveWords('console.liveWall.live', '●'),
} as const;

function liveWords(key: string, symbol: string): { readonly words: string; readonly symbol: string } {
  return {
    get words() {
      return t(key);
    },
    symbol,
  };
}
export type WallLiveStatus = keyof typeof LIVE_STATUS_WORDS;

/** The live status `value` names, `offline` for anything else (a field not sent yet). */
export function liveStatusOf(value: unknown): WallLiveStatus {
  return value === 'live' || value === 'connecting' ? value : 'offline';
}

/**
 * How many incidents are new to the proctor: those added since they last opened the candidate's tile
 * (`seen`, undefined when never opened: every incident is new). Never negative (an incident deleted
 * with its session's attempt).
 */
export function newIncidents(count: number, seen: number | undefined): number {
  return Math.max(0, count - (seen ?? 0));
}

/** Where the incident counts each proctor has seen are kept, per exam (localStorage). */
export function seenKey(examId: number | string): string {
  return `invigil.live-wall.seen-incidents.${examId}`;
}

/** The seen incident counts kept in `storage` for an exam, by session id (empty when none or unreadable). */
export function readSeen(storage: WallStorage | undefined, examId: number | string): Map<number, number> {
  const seen = new Map<number, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(safeGet(storage, seenKey(examId)) ?? '{}');
  } catch {
    return seen;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return seen;
  for (const [id, count] of Object.entries(parsed as Record<string, unknown>)) {
    if (/^\d+$/.test(id) && typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) {
      seen.set(Number(id), count);
    }
  }
  return seen;
}

/** Keeps the seen incident counts of an exam in `storage`; a refused write is ignored. */
export function saveSeen(
  storage: WallStorage | undefined,
  examId: number | string,
  seen: ReadonlyMap<number, number>,
): void {
  safeSet(storage, seenKey(examId), JSON.stringify(Object.fromEntries(seen)));
}

/**
 * The exam-clock second an incident filed now belongs at: whole seconds since `startTime` (the
 * session's `start_time` on the wall, the recording's start on the review screen of a running
 * session), rounded down as the review screen shows them; 0 before that time or for a time it
 * cannot read.
 */
export function liveOffset(startTime: string | null | undefined, now: number): number {
  const start = startTime === null || startTime === undefined ? Number.NaN : Date.parse(startTime);
  if (!Number.isFinite(start)) return 0;
  return Math.max(0, Math.floor((now - start) / 1000));
}

/** A chat message as the service sends it (V3, the room API and the sockets). */
export type WallMessage = LiveMessageJson;

/** `known` with `arrived` added: each message once (by id), oldest first. */
export function mergeMessages(known: readonly WallMessage[], arrived: readonly WallMessage[]): WallMessage[] {
  const byId = new Map<number, WallMessage>();
  for (const message of [...known, ...arrived]) byId.set(message.id, message);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The longest chat message the service takes, in characters after trimming. */
export const MESSAGE_MAX = 2000;

/** What is wrong with a chat message before it is sent, or undefined when it may go. */
export function messageProblem(body: string): string | undefined {
  const text = body.trim();
  if (text === '') return t('console.liveWall.writeFirst');
  if (text.length > MESSAGE_MAX) return t('console.liveWall.tooLong', { max: MESSAGE_MAX });
  return undefined;
}

function safeGet(storage: WallStorage | undefined, key: string): string | null {
  try {
    return storage?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function safeSet(storage: WallStorage | undefined, key: string, value: string): void {
  try {
    storage?.setItem(key, value);
  } catch {
    // Private windows and full storage refuse writes: the choice then lasts for this visit only.
  }
}
