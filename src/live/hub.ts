import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import { setLiveStatus } from '../domain/live/live-status.repository.ts';
import type {
  LiveChannel,
  LiveEngine,
  LiveLink,
  LivePublisherIdentity,
  LiveSubscriberIdentity,
} from './engine.ts';
import type { LiveEvent, LiveEvents } from '../domain/ports/live-events.ts';
import type { LiveStatus } from '../domain/live/live.ts';
import { type ClientSignal, parseClientSignal, type ServerMessage } from './protocol.ts';

/**
 * The signalling hub of live proctoring (docs/live-proctoring.md, "Sockets"): it owns the WebSockets
 * of the candidates' rooms, their phones and the proctors' walls, gives each a link to the media
 * engine, passes the browsers' signals to it, keeps each candidate's live status (memory,
 * `student_sessions`, and the exam's proctor sockets), and forwards the domain's live events (chat
 * messages, room controls).
 * One hub per serving process; the sockets of one exam must reach the same process.
 */

/** What the hub calls on a WebSocket: the part of the `ws` package's WebSocket it uses. */
export interface LiveSocket {
  /** 1 while open (ws's WebSocket.OPEN). */
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): void;
  on(event: 'message', listener: (data: unknown, isBinary: boolean) => void): unknown;
  on(event: 'pong' | 'close', listener: () => void): unknown;
}

/** A proctor's socket: the engine's subscriber identity, and whether its sign-in still holds. */
export interface LiveProctor extends LiveSubscriberIdentity {
  /**
   * True when mayWatch holds for every session of the exam (whoever manages it), so the statuses and
   * messages pushed to this socket need not ask it each time.
   */
  readonly watchesAll: boolean;
  /** Asked at every ping: false (the staff session ended, the user was deactivated) closes the socket. */
  readonly stillAllowed: () => Promise<boolean>;
}

export interface LiveHub {
  /** Takes over a candidate's room socket (its token already checked): link, hello, live status. */
  candidate(socket: LiveSocket, who: LivePublisherIdentity): void;
  /** Takes over a proctor's wall socket (its access already checked): link, hello, live statuses. */
  proctor(socket: LiveSocket, who: LiveProctor): void;
  /**
   * Takes over a candidate's phone socket (its pairing token already checked; `who.device` is
   * `phone`): a publishing link of its own, hello. The phone never changes the session's live
   * status, which is the computer's; it is closed when the session ends.
   */
  phone(socket: LiveSocket, who: LivePublisherIdentity): void;
  /** The status the hub holds for a session now (offline when it has no socket of it). */
  statusOf(sessionId: number): LiveStatus;
  /**
   * Closes every socket and link, and resolves once the candidates' statuses are stored (offline).
   * Idempotent; sockets offered afterwards are refused.
   */
  close(): Promise<void>;
}

export interface LiveHubTiming {
  /** How often every socket is pinged (and a proctor's sign-in checked). */
  readonly pingMs: number;
  /** A socket silent this long (no frame, no pong) is closed. */
  readonly silentMs: number;
  /** On close, how long sockets are given to finish their closing handshake before they are cut. */
  readonly closeGraceMs: number;
  /**
   * How long an exam's engine room outlives its last socket before it is ended (engine.endRoom):
   * long enough for a reload or a dropped connection to come back to the same room.
   */
  readonly roomIdleMs: number;
}

export const LIVE_HUB_TIMING: LiveHubTiming = {
  pingMs: 15_000,
  silentMs: 45_000,
  closeGraceMs: 1000,
  roomIdleMs: 120_000,
};

/** The fatal error of an older socket of a session when a newer one opens (a second tab). */
export const OPENED_ELSEWHERE = 'This exam room was opened somewhere else';
/** The fatal error of an older phone socket of a session when a newer one opens (another phone). */
export const PHONE_OPENED_ELSEWHERE = 'This phone link was opened somewhere else';
/** The non-fatal error of a frame that is not one ClientSignal as JSON text. */
export const UNREADABLE_SIGNAL = 'Unreadable message: send one JSON signal per text frame';
/** The non-fatal error of a signal of the other side's (a candidate subscribing, a proctor offering). */
export const WRONG_SIDE = 'That message is not for this socket';
/** The non-fatal error of a subscription to a candidate the proctor may not watch. */
export const MAY_NOT_WATCH = 'You may not watch this candidate';
/** The non-fatal error of a subscription whose permission could not be read (the database away). */
export const WATCH_NOT_CHECKED =
  'Could not check whether you may watch this candidate; try again in a moment';
/** The non-fatal error of a signal that failed in the hub itself (details in the log). */
export const SIGNAL_FAILED = 'The message could not be handled; try again';
/** The non-fatal error of a candidate's signal once its exam ended (fatal for its phone). */
export const EXAM_ENDED = 'The exam is finished';
/** The fatal error when the engine cannot give the socket a link. */
export const ENGINE_UNAVAILABLE = 'Live media is not available right now; try again in a moment';
/** The fatal error of a socket whose staff session ended. */
export const SIGNED_OUT = 'You are signed out';
/** The fatal error of a socket that sent more signals than it waited answers for. */
export const TOO_MANY_SIGNALS = 'Too many messages at once';
/** The fatal error of every socket when the service stops. */
export const SHUTTING_DOWN = 'The service is restarting; reconnect in a moment';

/** Close codes (4000–4999 are the application's). */
const CLOSE_REPLACED = 4000;
const CLOSE_REFUSED = 4001;
/** A phone's socket when its session ended. */
const CLOSE_FINISHED = 4002;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_ENGINE = 1011;

/** ws's WebSocket.OPEN. */
const OPEN = 1;

/**
 * Signals a socket may have waiting for the engine before it is considered a flood (a wall opening
 * subscribes to every candidate it shows at once).
 */
const MAX_QUEUED_SIGNALS = 512;

const PUBLISHER_SIGNALS: ReadonlySet<ClientSignal['type']> = new Set(['offer', 'media']);
const PROCTOR_SIGNALS: ReadonlySet<ClientSignal['type']> = new Set(['subscribe', 'unsubscribe', 'answer']);

/** One socket the hub holds. */
interface Peer {
  readonly socket: LiveSocket;
  readonly role: 'candidate' | 'proctor' | 'phone';
  readonly examId: number;
  /** The candidate's session, of the room or the phone (0 for a proctor). */
  readonly sessionId: number;
  /** The proctor's identity (undefined for a candidate). */
  readonly proctor: LiveProctor | undefined;
  link: LiveLink | undefined;
  /** Messages held until `hello` has gone out; undefined once it has. */
  held: ServerMessage[] | undefined;
  /** Settles once the socket has its link (or was refused one): signals wait for it. */
  ready: Promise<void>;
  /**
   * The browser's signals, handled one after another per candidate watched (a proctor's subscribe,
   * answer and unsubscribe of one session stay in order while different sessions go side by side),
   * or all in one line for a candidate (key 0).
   */
  readonly lines: Map<number, Promise<void>>;
  queued: number;
  /** Pushes that first ask mayWatch, sent in the order they were made. */
  pushes: Promise<void>;
  heardAt: number;
  closed: boolean;
  /** A candidate (or phone) whose exam ended: its link is closed and it may not publish again. */
  ended: boolean;
  /** Resolves when the socket has closed. */
  readonly gone: Promise<void>;
}

/** An exam with sockets: how many, and its engine room (opened with the first socket). */
interface Room {
  sockets: number;
  ready: Promise<void> | undefined;
  /** Set while the room has no socket: ends the engine room when it fires. */
  idle: NodeJS.Timeout | undefined;
}

function errorOf(error: string, fatal: boolean): ServerMessage {
  return { type: 'error', error, fatal };
}

/**
 * The text of an error an engine's receive threw: engines throw errors written for the browser (a
 * refused offer, a subscription to nothing); the name and stack stay in the log.
 */
function reasonOf(error: unknown): string {
  return error instanceof Error && error.message !== '' ? error.message : 'The signal was refused';
}

/**
 * Builds the hub over the engine, the database (live statuses), the domain's live events, the
 * service clock (updated_at of a status change) and a logger; starts its ping timer and listens to
 * the events. Returns the hub; throws nothing.
 */
export function createLiveHub(deps: {
  engine: LiveEngine;
  db: Db;
  liveEvents: LiveEvents;
  clock: Clock;
  log: Logger;
  timing?: Partial<LiveHubTiming>;
}): LiveHub {
  const { engine, db, liveEvents, clock, log } = deps;
  const timing: LiveHubTiming = { ...LIVE_HUB_TIMING, ...deps.timing };
  const peers = new Set<Peer>();
  /** The one socket of each session that counts (the newest). */
  const candidates = new Map<number, Peer>();
  /** The one phone socket of each session that counts (the newest). */
  const phones = new Map<number, Peer>();
  const proctors = new Map<number, Set<Peer>>();
  const rooms = new Map<number, Room>();
  /** Sessions not offline, with their exam. */
  const statuses = new Map<number, { examId: number; status: LiveStatus }>();
  /** Status writes under way, per session (one at a time each, so the last one stored wins). */
  const writes = new Map<number, Promise<void>>();
  let closing: Promise<void> | undefined;

  /** Silence is measured in real time: tests move the service clock by minutes. */
  const realNow = () => performance.now();

  function sendNow(peer: Peer, message: ServerMessage): void {
    if (peer.socket.readyState !== OPEN) return;
    try {
      peer.socket.send(JSON.stringify(message));
    } catch (error) {
      log.debug({ err: error }, 'live socket send failed');
    }
  }

  /** Sends to the browser, after `hello` (held until then). */
  function deliver(peer: Peer, message: ServerMessage): void {
    if (peer.closed) return;
    if (peer.held !== undefined) peer.held.push(message);
    else sendNow(peer, message);
  }

  /** Sends to a proctor if it may watch the session, keeping the order of such pushes. */
  function deliverIfWatching(peer: Peer, sessionId: number, message: ServerMessage): void {
    const proctor = peer.proctor;
    if (proctor === undefined) return;
    if (proctor.watchesAll) {
      deliver(peer, message);
      return;
    }
    peer.pushes = peer.pushes.then(async () => {
      if (peer.closed) return;
      try {
        if (await proctor.mayWatch(sessionId)) deliver(peer, message);
      } catch (error) {
        log.warn({ err: error, sessionId, userId: proctor.userId }, 'live push not sent: access unknown');
      }
    });
  }

  function toProctors(examId: number, sessionId: number, message: ServerMessage): void {
    for (const peer of proctors.get(examId) ?? []) deliverIfWatching(peer, sessionId, message);
  }

  function persist(sessionId: number): void {
    const before = writes.get(sessionId) ?? Promise.resolve();
    const write: Promise<void> = before
      .then(async () => {
        // The newest status when the write runs: writes queued behind one another collapse.
        await setLiveStatus(db, sessionId, statuses.get(sessionId)?.status ?? 'offline', clock.now());
      })
      .catch((error: unknown) => {
        log.error({ err: error, sessionId }, 'live status not stored');
      })
      .finally(() => {
        if (writes.get(sessionId) === write) writes.delete(sessionId);
      });
    writes.set(sessionId, write);
  }

  function setStatus(examId: number, sessionId: number, status: LiveStatus): void {
    const before = statuses.get(sessionId)?.status ?? 'offline';
    if (before === status) return;
    if (status === 'offline') statuses.delete(sessionId);
    else statuses.set(sessionId, { examId, status });
    persist(sessionId);
    toProctors(examId, sessionId, { type: 'live', sessionId, liveStatus: status });
  }

  function isCurrent(peer: Peer): boolean {
    return !peer.closed && candidates.get(peer.sessionId) === peer;
  }

  function roomReady(examId: number): Promise<void> {
    const room = rooms.get(examId);
    if (room === undefined) return Promise.resolve();
    room.ready ??= engine.openRoom(examId).catch((error: unknown) => {
      // The next socket of the exam tries again.
      room.ready = undefined;
      throw error;
    });
    return room.ready;
  }

  /**
   * The exam's last socket closed: unless one comes back within roomIdleMs, end its engine room
   * (only if it was opened) and forget it.
   */
  function idle(examId: number, room: Room): void {
    clearTimeout(room.idle);
    room.idle = setTimeout(() => {
      if (rooms.get(examId) !== room || room.sockets > 0) return;
      rooms.delete(examId);
      if (room.ready === undefined || closing !== undefined) return;
      engine.endRoom(examId).catch((error: unknown) => {
        log.warn({ err: error, examId }, 'live room not ended');
      });
    }, timing.roomIdleMs);
    room.idle.unref();
  }

  /** Forgets a socket: its link closed, its candidate offline if it was the session's socket. */
  function drop(peer: Peer): void {
    if (peer.closed) return;
    const wasCurrent = isCurrent(peer);
    peer.closed = true;
    peer.held = undefined;
    peers.delete(peer);
    peer.link?.close();
    const room = rooms.get(peer.examId);
    if (room !== undefined) {
      room.sockets -= 1;
      if (room.sockets <= 0) idle(peer.examId, room);
    }
    if (peer.role === 'proctor') {
      const set = proctors.get(peer.examId);
      set?.delete(peer);
      if (set?.size === 0) proctors.delete(peer.examId);
      return;
    }
    if (peer.role === 'phone') {
      if (phones.get(peer.sessionId) === peer) phones.delete(peer.sessionId);
      return;
    }
    if (wasCurrent) {
      candidates.delete(peer.sessionId);
      setStatus(peer.examId, peer.sessionId, 'offline');
    }
  }

  /** Sends a fatal error and closes the socket. */
  function fail(peer: Peer, error: string, code: number): void {
    if (peer.closed) return;
    // Straight out, ahead of anything held for after hello.
    sendNow(peer, errorOf(error, true));
    drop(peer);
    peer.socket.close(code, error.slice(0, 120));
  }

  async function handle(peer: Peer, signal: ClientSignal): Promise<void> {
    const link = peer.link;
    if (peer.closed || link === undefined) return;
    const allowed = peer.role === 'proctor' ? PROCTOR_SIGNALS : PUBLISHER_SIGNALS;
    if (!allowed.has(signal.type)) {
      deliver(peer, errorOf(WRONG_SIDE, false));
      return;
    }
    if (peer.ended) {
      deliver(peer, errorOf(EXAM_ENDED, false));
      return;
    }
    if (signal.type === 'subscribe' && peer.proctor !== undefined) {
      const allowed = await peer.proctor.mayWatch(signal.sessionId).catch((error: unknown) => {
        log.warn({ err: error, sessionId: signal.sessionId }, 'live watch permission not checked');
        return undefined;
      });
      if (allowed !== true) {
        deliver(peer, errorOf(allowed === false ? MAY_NOT_WATCH : WATCH_NOT_CHECKED, false));
        return;
      }
    }
    try {
      await link.receive(signal);
    } catch (error) {
      log.info({ err: error, type: signal.type, examId: peer.examId }, 'live signal refused by the engine');
      deliver(peer, errorOf(reasonOf(error), false));
    }
  }

  function onFrame(peer: Peer, data: unknown, isBinary: boolean): void {
    peer.heardAt = realNow();
    if (peer.closed) return;
    const text = !isBinary && Buffer.isBuffer(data) ? data.toString('utf8') : undefined;
    const signal = text === undefined ? undefined : parseClientSignal(text);
    if (signal === undefined) {
      deliver(peer, errorOf(UNREADABLE_SIGNAL, false));
      return;
    }
    if (peer.queued >= MAX_QUEUED_SIGNALS) {
      fail(peer, TOO_MANY_SIGNALS, CLOSE_REFUSED);
      return;
    }
    peer.queued += 1;
    const key = 'sessionId' in signal ? signal.sessionId : 0;
    const line: Promise<void> = (peer.lines.get(key) ?? peer.ready)
      .then(() => handle(peer, signal))
      .catch((error: unknown) => {
        log.error({ err: error, examId: peer.examId }, 'live signal failed');
        deliver(peer, errorOf(SIGNAL_FAILED, false));
      })
      .finally(() => {
        peer.queued -= 1;
        if (peer.lines.get(key) === line) peer.lines.delete(key);
      });
    peer.lines.set(key, line);
  }

  function channelOf(peer: Peer): LiveChannel {
    return {
      send: (message) => deliver(peer, message),
      mediaState: (state) => {
        if (peer.role === 'candidate' && !peer.ended && isCurrent(peer)) {
          setStatus(peer.examId, peer.sessionId, state);
        }
      },
    };
  }

  /** Gets the socket its link, then says hello and lets through what was held. */
  async function start(peer: Peer, open: (channel: LiveChannel) => Promise<LiveLink>): Promise<void> {
    let link: LiveLink;
    try {
      await roomReady(peer.examId);
      link = await open(channelOf(peer));
    } catch (error) {
      log.error({ err: error, examId: peer.examId, role: peer.role }, 'live engine refused a socket');
      fail(peer, ENGINE_UNAVAILABLE, CLOSE_ENGINE);
      return;
    }
    if (peer.closed) {
      link.close();
      return;
    }
    peer.link = link;
    sendNow(peer, { type: 'hello', role: peer.role, join: link.join });
    const held = peer.held ?? [];
    peer.held = undefined;
    for (const message of held) sendNow(peer, message);
    if (peer.role === 'proctor') {
      for (const [sessionId, { examId, status }] of statuses) {
        if (examId === peer.examId)
          deliverIfWatching(peer, sessionId, { type: 'live', sessionId, liveStatus: status });
      }
    }
  }

  function adopt(
    socket: LiveSocket,
    role: Peer['role'],
    examId: number,
    sessionId: number,
    proctor: LiveProctor | undefined,
  ): Peer | undefined {
    let gone!: () => void;
    const peer: Peer = {
      socket,
      role,
      examId,
      sessionId,
      proctor,
      link: undefined,
      held: [],
      ready: Promise.resolve(),
      lines: new Map(),
      queued: 0,
      pushes: Promise.resolve(),
      heardAt: realNow(),
      closed: false,
      ended: false,
      gone: new Promise((resolve) => {
        gone = resolve;
      }),
    };
    socket.on('close', () => {
      drop(peer);
      gone();
    });
    if (closing !== undefined) {
      peer.closed = true;
      sendNow(peer, errorOf(SHUTTING_DOWN, true));
      socket.close(CLOSE_GOING_AWAY, SHUTTING_DOWN);
      return undefined;
    }
    socket.on('message', (data, isBinary) => onFrame(peer, data, isBinary));
    socket.on('pong', () => {
      peer.heardAt = realNow();
    });
    peers.add(peer);
    const room = rooms.get(examId) ?? { sockets: 0, ready: undefined, idle: undefined };
    clearTimeout(room.idle);
    room.idle = undefined;
    room.sockets += 1;
    rooms.set(examId, room);
    return peer;
  }

  /**
   * The session ended: its phone is told, its media stops and its socket closes (a reconnect would
   * only be refused).
   */
  function endPhone(sessionId: number): void {
    const phone = phones.get(sessionId);
    if (phone === undefined) return;
    phone.ended = true;
    deliver(phone, { type: 'control', action: 'ended' });
    fail(phone, EXAM_ENDED, CLOSE_FINISHED);
  }

  function onEvent(event: LiveEvent): void {
    const candidate = candidates.get(event.sessionId);
    if (event.kind === 'message') {
      if (candidate !== undefined) deliver(candidate, { type: 'message', message: event.message });
      toProctors(event.examId, event.sessionId, { type: 'message', message: event.message });
      return;
    }
    if (event.action === 'ended') endPhone(event.sessionId);
    if (candidate === undefined) return;
    deliver(candidate, { type: 'control', action: event.action });
    if (event.action !== 'ended') return;
    // The exam is over for this candidate: its media stops; the room closes the socket itself.
    candidate.ended = true;
    candidate.link?.close();
    setStatus(candidate.examId, candidate.sessionId, 'offline');
  }

  async function checkSignIn(peer: Peer, proctor: LiveProctor): Promise<void> {
    try {
      if (!(await proctor.stillAllowed())) fail(peer, SIGNED_OUT, CLOSE_REFUSED);
    } catch (error) {
      // The database being away is no reason to cut a proctor off; the next ping asks again.
      log.warn({ err: error, userId: proctor.userId }, 'live proctor sign-in not checked');
    }
  }

  const pinger = setInterval(() => {
    const now = realNow();
    for (const peer of peers) {
      if (now - peer.heardAt > timing.silentMs) {
        log.debug({ examId: peer.examId, role: peer.role }, 'silent live socket closed');
        drop(peer);
        peer.socket.terminate();
        continue;
      }
      try {
        peer.socket.ping();
      } catch (error) {
        log.debug({ err: error }, 'live socket ping failed');
      }
      deliver(peer, { type: 'keepalive' });
      if (peer.proctor !== undefined) void checkSignIn(peer, peer.proctor);
    }
  }, timing.pingMs);
  pinger.unref();

  const unsubscribe = liveEvents.subscribe(onEvent);

  const failed = (error: unknown): void => {
    log.error({ err: error }, 'live socket set-up failed');
  };

  async function shutDown(): Promise<void> {
    clearInterval(pinger);
    for (const room of rooms.values()) clearTimeout(room.idle);
    unsubscribe();
    const open = [...peers];
    for (const peer of open) fail(peer, SHUTTING_DOWN, CLOSE_GOING_AWAY);
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, timing.closeGraceMs);
    });
    await Promise.race([Promise.all(open.map((peer) => peer.gone)), grace]);
    clearTimeout(graceTimer);
    for (const peer of open) peer.socket.terminate();
    await Promise.all([...writes.values()]);
  }

  return {
    candidate(socket, who) {
      const peer = adopt(socket, 'candidate', who.examId, who.sessionId, undefined);
      if (peer === undefined) return;
      const older = candidates.get(who.sessionId);
      if (older !== undefined) fail(older, OPENED_ELSEWHERE, CLOSE_REPLACED);
      candidates.set(who.sessionId, peer);
      setStatus(who.examId, who.sessionId, 'connecting');
      peer.ready = start(peer, (channel) => engine.publisher(who, channel)).catch(failed);
    },

    phone(socket, who) {
      const peer = adopt(socket, 'phone', who.examId, who.sessionId, undefined);
      if (peer === undefined) return;
      const older = phones.get(who.sessionId);
      if (older !== undefined) fail(older, PHONE_OPENED_ELSEWHERE, CLOSE_REPLACED);
      phones.set(who.sessionId, peer);
      const phone: LivePublisherIdentity = { ...who, device: 'phone' };
      peer.ready = start(peer, (channel) => engine.publisher(phone, channel)).catch(failed);
    },

    proctor(socket, who) {
      const peer = adopt(socket, 'proctor', who.examId, 0, who);
      if (peer === undefined) return;
      const set = proctors.get(who.examId) ?? new Set<Peer>();
      set.add(peer);
      proctors.set(who.examId, set);
      peer.ready = start(peer, (channel) => engine.subscriber(who, channel)).catch(failed);
    },

    statusOf(sessionId) {
      return statuses.get(sessionId)?.status ?? 'offline';
    },

    close() {
      closing ??= shutDown();
      return closing;
    },
  };
}
