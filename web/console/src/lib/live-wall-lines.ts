/**
 * The proctor wall's sentences about itself: how live its two connections are (the monitor's
 * stream of statuses, the live socket of video and chat) and why no candidate is shown.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import type { SocketStatus } from './live-media';
import type { MonitorSession, StreamState } from './monitor-stream';

/** The statuses' half of the connection line. */
export function monitorLine(state: StreamState): string {
  switch (state.kind) {
    case 'connecting':
      return t('console.liveWallLines.statusesConnecting');
    case 'live':
      return t('console.liveWallLines.statusesLive');
    case 'reconnecting':
      return t('console.liveWallLines.statusesReconnecting', { why: state.why });
    case 'stopped':
      return t('console.liveWallLines.statusesStopped', { why: state.why });
  }
}

/** The video and chat's half of the connection line. */
export function socketLine(status: SocketStatus | undefined): string {
  switch (status) {
    case undefined:
    case 'connecting':
      return t('console.liveWallLines.videoConnecting');
    case 'open':
      return t('console.liveWallLines.videoConnected');
    case 'closed':
      return t('console.liveWallLines.videoDisconnected');
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
  if (sessions.size === 0) return t('console.liveWallLines.noCandidates');
  if (onlyMine) {
    if (![...sessions.values()].some((item) => item.proctor_id === userId))
      return t('console.liveWallLines.noneAssigned');
  }
  return t('console.liveWallLines.allFinished');
}
