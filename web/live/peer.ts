/**
 * What the embedded publisher and the watches share: retries, peer connections that gather their
 * ICE candidates before the offer or answer goes out, and following a connection's state.
 */
import type { IceServer, LivekitModule } from './types.ts';

/** The first wait before reconnecting (the socket, a failed peer connection); doubles up to the next. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 5000;
/** How long an offer or answer waits for ICE gathering; after it, it goes with what was gathered. */
const GATHERING_LIMIT_MS = 4000;
/** A peer connection `disconnected` for this long is treated as failed. */
const DISCONNECTED_LIMIT_MS = 5000;

let livekitModule: Promise<LivekitModule> | undefined;

/**
 * Loads the LiveKit adapter (a chunk of its own, with livekit-client in a further one) once, only
 * when the server uses LiveKit. Returns it; rejects when it cannot be loaded.
 */
export function loadLivekit(): Promise<LivekitModule> {
  livekitModule ??= import('./livekit.ts');
  return livekitModule;
}

/** The wait before retry number `attempt` (0, 1, …): 1 s, 2 s, 4 s, then 5 s. */
export function retryDelay(attempt: number): number {
  return Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_MAX_MS);
}

/** Runs a caller's callback; a mistake in it must not break the connection. */
export function safely(callback: () => void): void {
  try {
    callback();
  } catch (error) {
    console.error('live: a callback failed', error);
  }
}

export function newPeerConnection(iceServers: readonly IceServer[]): RTCPeerConnection {
  return new RTCPeerConnection({
    iceServers: iceServers.map((server) => ({ ...server })),
    bundlePolicy: 'max-bundle',
  });
}

/**
 * Waits until the connection has gathered its ICE candidates, or GATHERING_LIMIT_MS (a TURN server
 * that does not answer must not hold the offer back). Returns the local description's SDP.
 */
export async function gatheredSdp(pc: RTCPeerConnection): Promise<string> {
  if (pc.iceGatheringState !== 'complete') {
    await new Promise<void>((resolve) => {
      const done = () => {
        window.clearTimeout(timer);
        pc.removeEventListener('icegatheringstatechange', changed);
        resolve();
      };
      const changed = () => {
        if (pc.iceGatheringState === 'complete') done();
      };
      const timer = window.setTimeout(done, GATHERING_LIMIT_MS);
      pc.addEventListener('icegatheringstatechange', changed);
    });
  }
  return pc.localDescription?.sdp ?? '';
}

/** A number field of a stats entry, or undefined. */
export function statNumber(stat: Record<string, unknown>, field: string): number | undefined {
  const value = stat[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * What holds one peer connection at a time and replaces it when it fails: the embedded publisher
 * and a watch.
 */
export interface PeerOwner {
  pc: RTCPeerConnection | undefined;
  failures: number;
  disconnectedTimer: number | undefined;
  report(state: 'connecting' | 'live'): void;
}

/**
 * Follows `pc`'s connection state for `owner` while it is the owner's current connection: connected
 * reports `live` and ends the run of failures; disconnected (often a moment's loss that ICE rides
 * out) reports `connecting` and calls `replace` if it lasts DISCONNECTED_LIMIT_MS; failed calls
 * `replace` at once. Returns nothing.
 */
export function followConnection(owner: PeerOwner, pc: RTCPeerConnection, replace: () => void): void {
  pc.addEventListener('connectionstatechange', () => {
    if (pc !== owner.pc) return;
    window.clearTimeout(owner.disconnectedTimer);
    switch (pc.connectionState) {
      case 'connected':
        owner.failures = 0;
        owner.report('live');
        return;
      case 'disconnected':
        owner.report('connecting');
        owner.disconnectedTimer = window.setTimeout(() => {
          if (owner.pc === pc && pc.connectionState === 'disconnected') replace();
        }, DISCONNECTED_LIMIT_MS);
        return;
      case 'failed':
        replace();
        return;
      default:
        return;
    }
  });
}
