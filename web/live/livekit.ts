/**
 * Live proctoring through a LiveKit server, in the browser (docs/live-proctoring.md, "LiveKit"). The
 * live client loads this module when the socket's `hello` names the LiveKit engine; this module loads
 * livekit-client itself (a chunk of its own in the web build) only then, so pages on the embedded
 * engine never download it.
 *
 * - A candidate publishes its camera (source camera), microphone (microphone) and screen
 *   (screen_share) into the exam's room with its join token; the tracks stay the page's own (the
 *   recorder uses them too), so nothing here ever stops them.
 * - A candidate's phone publishes the same way, as participant `candidate-<sessionId>-phone`, its
 *   camera's video alone (source camera).
 * - A proctor joins the exam's room once per join token (hidden, subscribing to nothing by itself) and
 *   each watch subscribes to one candidate's tracks only, by identity `candidate-<sessionId>` (or its
 *   phone's, `candidate-<sessionId>-phone`).
 * - Both sides reconnect by themselves (backoff 1 s → 5 s) unless LiveKit refused the token, removed
 *   the participant (its socket closed; a new `hello` brings a new token), ended the room, or another
 *   connection took over the identity.
 */
import type { Room, Track } from 'livekit-client';
import {
  connectOptions,
  isFinal,
  isRefused,
  livekitClient,
  newRoom,
  retryDelay,
  type LivekitClient,
} from './livekit-room.ts';
import type { LivekitJoin, Media } from './types.ts';

export { watchLivekit } from './livekit-watch.ts';

// ---------------------------------------------------------------------------------------------
// Candidate: publishing

/**
 * Publishes a candidate's media into its exam's LiveKit room and keeps it published (reconnecting
 * by itself) until `close()`. `onState('live')` once connected with every track published,
 * `onState('connecting')` before that and whenever the connection is lost. The streams' tracks are
 * the caller's: they are published as they are and never stopped here. Returns the handle to close.
 */
export function publishLivekit(
  join: LivekitJoin,
  { camera, screen }: Media,
  onState: (state: 'connecting' | 'live') => void,
): { close(): void } {
  let stopped = false;
  let attempt = 0;
  let room: Room | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let reported: 'connecting' | 'live' | undefined;

  const report = (state: 'connecting' | 'live') => {
    if (stopped || state === reported) return;
    reported = state;
    onState(state);
  };

  const retry = () => {
    if (stopped) return;
    report('connecting');
    retryTimer = setTimeout(() => void connect(), retryDelay(attempt));
    attempt += 1;
  };

  const connect = async () => {
    let lk: LivekitClient;
    try {
      lk = await livekitClient();
    } catch (error) {
      console.warn('live: could not load livekit-client', error);
      retry();
      return;
    }
    if (stopped) return;
    const current = newRoom(lk);
    room = current;
    current.on(lk.RoomEvent.Reconnecting, () => report('connecting'));
    current.on(lk.RoomEvent.Reconnected, () => report('live'));
    current.on(lk.RoomEvent.Disconnected, (reason) => {
      if (stopped || room !== current) return;
      report('connecting');
      if (!isFinal(lk, reason)) retry();
    });
    try {
      await current.connect(join.url, join.token, connectOptions(join));
      const { Source } = lk.Track;
      const tracks: [MediaStreamTrack | undefined, Track.Source, string][] = [
        [camera?.getVideoTracks()[0], Source.Camera, 'camera'],
        [camera?.getAudioTracks()[0], Source.Microphone, 'microphone'],
        [screen?.getVideoTracks()[0], Source.ScreenShare, 'screen'],
      ];
      for (const [track, source, name] of tracks) {
        if (track === undefined || track.readyState !== 'live') continue;
        await current.localParticipant.publishTrack(track, { source, name });
        if (stopped || room !== current) return;
      }
      attempt = 0;
      report('live');
    } catch (error) {
      if (stopped || room !== current) return;
      console.warn('live: could not publish to LiveKit', error);
      room = undefined;
      void current.disconnect(false);
      if (isRefused(lk, error)) {
        report('connecting');
        return;
      }
      retry();
    }
  };

  report('connecting');
  void connect();
  return {
    close() {
      if (stopped) return;
      stopped = true;
      clearTimeout(retryTimer);
      const current = room;
      room = undefined;
      void current?.disconnect(false);
    },
  };
}
