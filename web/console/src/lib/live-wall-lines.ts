/**
 * The proctor wall's sentences about itself: how live its two connections are (the monitor's
 * stream of statuses, the live socket of video and chat) and why no candidate is shown.
 */
import type { SocketStatus } from './live-media';
import type { MonitorSession, StreamState } from './monitor-stream';

/** The statuses' half of the connection line. */
export function monitorLine(state: StreamState): string {
  switch (state.kind) {
    case 'connecting':
      return 'Statuses: connecting…';
    case 'live':
      return 'Statuses: live.';
    case 'reconnecting':
      return `Statuses: reconnecting… ${state.why} The wall shows the last state it received.`;
    case 'stopped':
      return `Statuses: not live. ${state.why} Reload the page to try again.`;
  }
}

/** The video and chat's half of the connection line. */
export function socketLine(status: SocketStatus | undefined): string {
  switch (status) {
    case undefined:
    case 'connecting':
      return 'Video and chat: connecting…';
    case 'open':
      return 'Video and chat: connected.';
    case 'closed':
      return 'Video and chat: disconnected. Reload the page to try again.';
  }
}

/**
 * Why the wall is empty: no candidates at all, none assigned to the proctor (when the wall shows
 * only theirs), or every one shown has finished.
 */
export function emptyWords(
  sessions: ReadonlyMap<number, MonitorSession>,
  onlyMine: boolean,
  userId: number,
): string {
  if (sessions.size === 0) return 'No candidates in this exam yet.';
  if (onlyMine) {
    if (![...sessions.values()].some((item) => item.proctor_id === userId))
      return 'No candidates of this exam are assigned to you.';
  }
  return 'Every candidate shown here has finished. Clear “Hide finished exams” to see them.';
}
