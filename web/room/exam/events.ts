/**
 * What the exam room reports as incidents while the exam runs (docs/room.md, "Events reported as
 * incidents"): focus lost and regained, full screen left and entered, the connection lost and back,
 * copy/cut/paste, a second screen, a reload. Events wait in a queue while the server cannot be
 * reached and are sent one at a time, in order, each with its offset from the start.
 */
import { ApiError } from '../../shared/http.ts';
import type { RoomEventRequest } from '../../shared/candidate-api';
import { room } from '../state/room.svelte.ts';

/** An event's type, as the room API names it. */
export type EventType = RoomEventRequest['type'];

interface PendingEvent {
  readonly type: EventType;
  readonly offset_time: number | undefined;
}

/** Copy, cut and paste are reported at most once in this many milliseconds. */
const COPY_EVERY_MS = 5000;

/** Events waiting for the connection. */
const pending: PendingEvent[] = [];
/** The send in progress: sends run one after another, so no event goes twice or is skipped. */
let sending: Promise<void> = Promise.resolve();

/**
 * Whole seconds since the exam started, by the server's clock (its time in the view, moved on by
 * the time since the view arrived). Returns undefined before the exam has a start.
 */
export function offsetNow(): number | undefined {
  const view = room.view;
  if (view?.session.start_time == null) return undefined;
  const serverNow = Date.parse(view.server_time) + (performance.now() - room.viewAt);
  return Math.max(0, Math.floor((serverNow - Date.parse(view.session.start_time)) / 1000));
}

/** Queues an event at this moment of the exam and sends it. Resolves when the queue is sent (or waits for the connection). */
export function sendEvent(type: EventType): Promise<void> {
  pending.push({ type, offset_time: offsetNow() });
  return flushEvents();
}

/** Sends the waiting events in order, after any send already running. Resolves when done. */
export function flushEvents(): Promise<void> {
  sending = sending.then(sendPending);
  return sending;
}

async function sendPending(): Promise<void> {
  while (pending.length > 0 && room.view?.session.status === 'exam_started') {
    const event = pending[0];
    if (event === undefined) break;
    try {
      await room.call(
        'POST',
        '/events',
        event.offset_time === undefined ? { type: event.type } : { ...event },
      );
      pending.shift();
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) return; // sent again when back online
      pending.shift(); // refused for good (finished, invalid): nothing to retry
    }
  }
}

let watching = false;

/**
 * Starts reporting the window's events (once per page). `finishing` tells whether the candidate is
 * finishing (focus moving to the dialog's buttons is then no incident); `online` runs when the
 * browser reports the network back (the recordings' queues send again).
 */
export function watchEvents(finishing: () => boolean, online: () => void): void {
  if (watching) return;
  watching = true;
  // A reload or a closed tab hides the page too; that is reported as page_reloaded when it reopens.
  let unloading = false;
  let focusLost = false;
  let lastCopy = 0;
  window.addEventListener('beforeunload', () => (unloading = true));
  window.addEventListener('pagehide', () => (unloading = true));
  const lose = () => {
    if (focusLost || finishing() || unloading) return;
    focusLost = true;
    void sendEvent('focus_lost');
  };
  const regain = () => {
    if (!focusLost) return;
    focusLost = false;
    void sendEvent('focus_regained');
  };
  window.addEventListener('blur', lose);
  window.addEventListener('focus', regain);
  document.addEventListener('visibilitychange', () => (document.hidden ? lose() : regain()));
  document.addEventListener(
    'fullscreenchange',
    () => void sendEvent(document.fullscreenElement === null ? 'fullscreen_left' : 'fullscreen_entered'),
  );
  window.addEventListener('offline', () =>
    pending.push({ type: 'connection_lost', offset_time: offsetNow() }),
  );
  window.addEventListener('online', () => {
    pending.push({ type: 'connection_restored', offset_time: offsetNow() });
    void flushEvents();
    online();
  });
  for (const type of ['copy', 'paste', 'cut']) {
    document.addEventListener(type, () => {
      if (Date.now() - lastCopy < COPY_EVERY_MS) return;
      lastCopy = Date.now();
      void sendEvent('copy_paste');
    });
  }
  if ('isExtended' in window.screen && window.screen.isExtended === true) void sendEvent('multiple_screens');
}
