/**
 * The phone's presence: the page warns before it is closed while filming, tells the server when
 * the student leaves it, says hello again when it comes back from the browser's page cache, and
 * beats at once when it is shown or hidden, or back online.
 */

export interface PresenceHooks {
  /** True while the page films the exam: closing it then asks first. */
  readonly filming: () => boolean;
  /** True when the server should hear of the phone leaving (after the hello, before the end). */
  readonly present: () => boolean;
  /** Tells the server the phone is gone. */
  readonly leave: () => void;
  /** Back from the page cache after leaving: say hello again. */
  readonly returned: () => void;
  /** The page was shown or hidden. */
  readonly visibility: (visible: boolean) => void;
  /** The connection is back. */
  readonly online: () => void;
}

/** Follows the page's leaving, returning, visibility and connection for the life of the page. */
export function watchPresence(hooks: PresenceHooks): void {
  let leaving = false;
  window.addEventListener('beforeunload', (event) => {
    if (!hooks.filming()) return;
    event.preventDefault();
    // Older browsers show the warning only when returnValue is set.
    event.returnValue = '';
  });
  window.addEventListener('pagehide', () => {
    if (leaving || !hooks.present()) return;
    leaving = true;
    hooks.leave();
  });
  // Back from the browser's page cache: the server heard the phone leave, so say hello again.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted || !leaving) return;
    leaving = false;
    hooks.returned();
  });
  document.addEventListener('visibilitychange', () => {
    hooks.visibility(document.visibilityState === 'visible');
  });
  window.addEventListener('online', () => hooks.online());
}
