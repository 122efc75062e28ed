/**
 * The browser's side of live proctoring (docs/live-proctoring.md), shared by the candidate's exam
 * room (publishes its camera, microphone and screen), the candidate's phone in a `mobile_cam` exam
 * (publishes its camera's video alone, `cameraOnly`; phone-live.ts) and the proctor wall in the
 * console (watches candidates, and their phones when asked with `onPhone`). One WebSocket to the
 * service carries the signalling (src/live/protocol.ts); the media goes to the embedded engine over
 * one RTCPeerConnection per publication or watched candidate (or phone), or through LiveKit
 * (livekit.ts, loaded only then) when the server says so in `hello`.
 *
 * Everything reconnects by itself: the socket with a backoff of 1 s growing to 5 s, then the
 * publication and every watch again over the new socket; a peer connection that fails is offered
 * anew. An entry of the web build: the console and the room import it, and pages that load it by
 * its old address (/live/assets/live-client.js) are redirected to the built file.
 *
 * Media layout (embedded engine): three m-lines in a fixed order, 0 camera video, 1 microphone
 * audio, 2 screen video; a line without a track carries nothing. The phone publishes one m-line, its
 * camera's video, and a proctor watches it over a peer connection of its own (signals with
 * `device: "phone"`). Offers and answers are complete (ICE gathered, no trickle).
 */
import { EmbeddedPublisher } from './embedded-publisher.ts';
import { LivekitPublisher } from './livekit-publisher.ts';
import { NO_MEDIA, cameraVideoOnly, cloneMedia, hasTracks, mediaKey, stopMedia } from './media.ts';
import { retryDelay, safely } from './peer.ts';
import type {
  ClientSignal,
  LiveConnection,
  LiveJoin,
  LiveOptions,
  Media,
  PublishState,
  Publisher,
  ServerMessage,
  SocketStatus,
  WatchState,
} from './types.ts';
import { Watch } from './watch.ts';

export type * from './types.ts';

/** A socket that brings nothing for this long (the server sends a keepalive every 15 s) is dead. */
const KEEPALIVE_LIMIT_MS = 40000;

/** The socket's address for a path like /live/room/TOKEN (ws:// or wss:// like the page). */
function socketAddress(path: string): string {
  const address = new URL(path, location.href);
  address.protocol = address.protocol === 'https:' ? 'wss:' : 'ws:';
  return address.toString();
}

/** Reads one server frame; undefined for anything that is not a JSON object with a `type`. */
function parseServerMessage(data: unknown): ServerMessage | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value !== 'object' || value === null || !('type' in value) || typeof value.type !== 'string') {
      return undefined;
    }
    return value as ServerMessage;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The connection

/**
 * Opens the live socket at `url` (a path like /live/room/TOKEN or /live/exams/7), reconnecting by
 * itself (1 s, 2 s, 4 s, then every 5 s) and publishing / watching again after every reconnect.
 * `onMessage` gets the chat, control, live-status and error messages; `onStatus` the socket's state
 * (`open` once the server said hello); `onPublishState` whether the published media reaches the
 * server. A fatal `error` ends the connection (status `closed`, no reconnect). With `cameraOnly`
 * (the phone's socket) only the camera's video is published, on one line. Returns the connection;
 * never throws.
 */
export function connectLive({
  url,
  cameraOnly = false,
  onMessage,
  onStatus,
  onPublishState,
}: LiveOptions): LiveConnection {
  const address = socketAddress(url);
  let socket: WebSocket | undefined;
  let join: LiveJoin | undefined;
  let status: SocketStatus = 'connecting';
  let closed = false;
  let fatal = false;
  let attempts = 0;
  let reconnectTimer: number | undefined;
  /** When the current socket last brought a frame (the server sends one at least every 15 s). */
  let heardAt = Date.now();
  /** What the page wants published (own copies), and the publisher for the current socket. */
  let media: Media = NO_MEDIA;
  let publishedKey = '';
  let publisher: Publisher | undefined;
  let publishState: PublishState | undefined;
  const watches = new Map<number, Watch>();
  /** The watches of candidates' phones (those watched with `onPhone`), by session id. */
  const phoneWatches = new Map<number, Watch>();

  /** Every watch, computers' and phones'. */
  function allWatches(): Watch[] {
    return [...watches.values(), ...phoneWatches.values()];
  }

  function setStatus(next: SocketStatus): void {
    if (status === next) return;
    status = next;
    safely(() => onStatus?.(next));
  }

  function reportPublish(next: PublishState): void {
    if (publishState === next) return;
    publishState = next;
    safely(() => onPublishState?.(next));
  }

  /** Sends a signal over the open socket. Returns false when there is none (it is sent again on hello). */
  function signal(message: ClientSignal): boolean {
    if (socket?.readyState !== WebSocket.OPEN || join === undefined) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  function startPublisher(): void {
    publisher?.close();
    publisher = undefined;
    if (join === undefined || !hasTracks(media)) {
      reportPublish(hasTracks(media) ? 'connecting' : 'off');
      return;
    }
    publisher =
      join.engine === 'livekit'
        ? new LivekitPublisher(join, signal, reportPublish)
        : new EmbeddedPublisher(join.iceServers, signal, reportPublish, cameraOnly);
    publisher.setMedia(media);
  }

  function connect(): void {
    if (closed) return;
    setStatus('connecting');
    let opened: WebSocket;
    try {
      opened = new WebSocket(address);
    } catch (error) {
      console.warn('live: the socket could not be opened', error);
      scheduleReconnect();
      return;
    }
    socket = opened;
    heardAt = Date.now();
    opened.addEventListener('message', (event) => {
      if (socket !== opened) return;
      heardAt = Date.now();
      receive(parseServerMessage(event.data));
    });
    opened.addEventListener('close', () => {
      if (socket === opened) lost();
    });
  }

  /** The socket closed (or was given up on): everything over it is gone; reconnect unless closed. */
  function lost(): void {
    socket = undefined;
    join = undefined;
    publisher?.close();
    publisher = undefined;
    if (hasTracks(media)) reportPublish('connecting');
    for (const watch of allWatches()) watch.disconnected();
    if (closed || fatal) {
      setStatus('closed');
      return;
    }
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    setStatus('connecting');
    window.clearTimeout(reconnectTimer);
    reconnectTimer = window.setTimeout(connect, retryDelay(attempts));
    attempts += 1;
  }

  function receive(message: ServerMessage | undefined): void {
    if (message === undefined) return;
    switch (message.type) {
      case 'hello':
        join = message.join;
        attempts = 0;
        setStatus('open');
        startPublisher();
        for (const watch of allWatches()) watch.start(message.join);
        return;
      case 'answer':
        publisher?.answer(message.sdp);
        return;
      case 'offer':
        (message.device === 'phone' ? phoneWatches : watches).get(message.sessionId)?.offer(message.sdp);
        return;
      case 'unpublished':
        (message.device === 'phone' ? phoneWatches : watches).get(message.sessionId)?.unpublished();
        return;
      case 'error':
        if (message.fatal) fatal = true;
        safely(() => onMessage?.(message));
        return;
      case 'message':
      case 'control':
      case 'live':
        safely(() => onMessage?.(message));
        return;
      default:
        return;
    }
  }

  /**
   * A watch of the phone of session `sessionId`, registered, telling `onPhone` its video while it
   * flows (the phone's connection is up) and null whenever it does not. Returns the watch.
   */
  function watchPhone(sessionId: number, onPhone: (stream: MediaStream | null) => void): Watch {
    let stream: MediaStream | undefined;
    let state: WatchState | undefined;
    let told: MediaStream | null | undefined;
    const tell = () => {
      const shown = state === 'live' && stream !== undefined ? stream : null;
      if (shown === told) return;
      told = shown;
      safely(() => onPhone(shown));
    };
    const phone = new Watch(
      sessionId,
      {
        onStream: (kind, next) => {
          if (kind !== 'camera') return;
          stream = next;
          tell();
        },
        onState: (next) => {
          state = next;
          tell();
        },
      },
      signal,
      'phone',
    );
    phoneWatches.set(sessionId, phone);
    return phone;
  }

  // The browser knows first when the network is gone or back; a socket waiting on a dead line
  // would otherwise notice only when the server's pings stop reaching it.
  const offline = () => {
    if (socket !== undefined) {
      const old = socket;
      lost();
      old.close();
    }
  };
  const online = () => {
    if (closed || fatal || socket !== undefined) return;
    attempts = 0;
    window.clearTimeout(reconnectTimer);
    connect();
  };
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);
  // A network that dies without the browser noticing leaves the socket open and silent: the server's
  // keepalives stop arriving, and the socket is given up on and opened anew.
  const watchdog = window.setInterval(() => {
    if (socket?.readyState === WebSocket.OPEN && Date.now() - heardAt > KEEPALIVE_LIMIT_MS) offline();
  }, KEEPALIVE_LIMIT_MS / 8);
  connect();

  return {
    get status() {
      return status;
    },

    publish(wanted) {
      if (closed) return;
      const next = cameraOnly ? cameraVideoOnly(wanted) : wanted;
      const key = mediaKey(next);
      if (key === publishedKey) return;
      publishedKey = key;
      const old = media;
      media = cloneMedia(next);
      if (publisher === undefined) startPublisher();
      else publisher.setMedia(media);
      if (!hasTracks(media)) reportPublish('off');
      stopMedia(old);
    },

    watch(sessionId, handlers = {}) {
      watches.get(sessionId)?.stop();
      phoneWatches.get(sessionId)?.stop();
      phoneWatches.delete(sessionId);
      const watch = new Watch(sessionId, handlers, signal);
      watches.set(sessionId, watch);
      const phone = handlers.onPhone === undefined ? undefined : watchPhone(sessionId, handlers.onPhone);
      for (const each of phone === undefined ? [watch] : [watch, phone]) {
        if (join !== undefined) each.start(join);
        else each.report('connecting');
      }
      return {
        stop() {
          watch.stop();
          if (watches.get(sessionId) === watch) watches.delete(sessionId);
          if (phone === undefined) return;
          phone.stop();
          if (phoneWatches.get(sessionId) === phone) phoneWatches.delete(sessionId);
        },
        stats: () => watch.stats(),
      };
    },

    close() {
      if (closed) return;
      closed = true;
      window.removeEventListener('offline', offline);
      window.removeEventListener('online', online);
      window.clearInterval(watchdog);
      window.clearTimeout(reconnectTimer);
      for (const watch of allWatches()) watch.stop();
      watches.clear();
      phoneWatches.clear();
      publisher?.close();
      publisher = undefined;
      stopMedia(media);
      media = NO_MEDIA;
      publishedKey = '';
      const old = socket;
      socket = undefined;
      join = undefined;
      old?.close(1000);
      setStatus('closed');
    },
  };
}
