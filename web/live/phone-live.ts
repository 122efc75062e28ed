/**
 * The phone's side of live proctoring (docs/live-proctoring.md, "The phone"): in a `live_proctoring`
 * exam with `mobile_cam` the phone page shows its camera to the proctor as the candidate's side view,
 * beside the computer's camera and screen. An entry of the web build (old address
 * /m/assets/mobile-live.js); it loads the live client only when started and opens the phone's socket,
 * `/live/mobile/<pairing token>`. Only the camera's video is sent: no sound, at about 640×360 and 15
 * frames a second whatever the page records. The page's own tracks are never stopped here (the live
 * client publishes copies), so the recording goes on whatever happens to the live connection.
 *
 *   const live = startPhoneLive({ token, stream, onState });
 *   live.setStream(otherStream); // the page turned another camera on: publish that one instead
 *   live.stop();                 // stop sending (idempotent); onState is not called any more
 *
 * Never throws; a failure only shows in the state. The page's Content-Security-Policy must allow
 * connecting to the service's WebSocket and, on LiveKit, the LiveKit server (liveConnectSources in
 * src/live/csp.ts); scripts come from the service itself.
 */
import type { AppMessage, LiveConnection, PublishState, SocketStatus } from './types.ts';

/**
 * - `connecting`: reaching the proctoring service, or the camera is on its way to it (again, after a
 *   network change: the client reconnects by itself, 1 s growing to 5 s);
 * - `live`: the camera reaches the service: the proctor can watch it;
 * - `ended`: the exam is finished; nothing is sent any more;
 * - `closed`: the service closed the link for good (the same pairing link was opened on another
 *   phone or tab, which took over); nothing is sent any more;
 * - `unavailable`: the live client could not be loaded; nothing is sent (reload to try again).
 */
export type PhoneLiveState = 'connecting' | 'live' | 'ended' | 'closed' | 'unavailable';

export interface PhoneLiveOptions {
  /** The pairing token (the last part of the page's address /m/<token>). */
  readonly token: string;
  /** The phone's camera: its first video track is sent, audio is ignored. */
  readonly stream: MediaStream;
  /** Called when the state changes. */
  readonly onState?: (state: PhoneLiveState) => void;
}

export interface PhoneLive {
  setStream(stream: MediaStream): void;
  stop(): void;
}

/** The fatal error the service sends the phone when the session ended (src/live/hub.ts EXAM_ENDED). */
const EXAM_ENDED = 'The exam is finished';

/**
 * Starts showing the phone's camera to the proctor. Returns the handle to switch the camera or stop;
 * never throws (see PhoneLiveState for what `onState` hears).
 */
export function startPhoneLive({ token, stream, onState }: PhoneLiveOptions): PhoneLive {
  let stopped = false;
  let connection: LiveConnection | undefined;
  let current = stream;
  let socket: SocketStatus = 'connecting';
  let media: PublishState = 'off';
  /** Set once the connection is over for good: what the state stays at. */
  let final: 'ended' | 'closed' | 'unavailable' | undefined;
  let reported: PhoneLiveState | undefined;

  const report = () => {
    if (stopped) return;
    const state = final ?? (socket === 'open' && media === 'live' ? 'live' : 'connecting');
    if (state === reported) return;
    reported = state;
    try {
      onState?.(state);
    } catch (error) {
      console.error('phone live: onState failed', error);
    }
  };

  const received = (message: AppMessage) => {
    const ended =
      (message.type === 'control' && message.action === 'ended') ||
      (message.type === 'error' && message.fatal && message.error === EXAM_ENDED);
    if (!ended) return;
    final = 'ended';
    report();
    // The service closes the socket itself; closing here too stops the copies of the camera at once.
    connection?.close();
  };

  report();
  import('./live-client.ts')
    .then((client) => {
      if (stopped) return;
      connection = client.connectLive({
        url: `/live/mobile/${encodeURIComponent(token)}`,
        cameraOnly: true,
        onMessage: received,
        onStatus: (status) => {
          socket = status;
          // Closed without being told the exam ended: another phone took the link over.
          if (status === 'closed') final ??= 'closed';
          report();
        },
        onPublishState: (state) => {
          media = state;
          report();
        },
      });
      connection.publish({ camera: current, screen: null });
    })
    .catch((error: unknown) => {
      console.warn('phone live: the live client could not be loaded', error);
      final = 'unavailable';
      report();
    });

  return {
    setStream(next) {
      if (stopped || next === current) return;
      current = next;
      connection?.publish({ camera: next, screen: null });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      connection?.close();
      connection = undefined;
    },
  };
}

/**
 * The name the phone page has always called: startPhoneLive with its options (`exam` is not
 * needed). Returns the same handle.
 */
export function startMobileLive({
  token,
  stream,
  onState,
}: PhoneLiveOptions & { exam?: unknown }): PhoneLive {
  return startPhoneLive({ token, stream, onState });
}
