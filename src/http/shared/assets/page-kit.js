// @ts-check
/**
 * What the candidate's pages share (the exam room, src/http/room/page/room.js, and the phone page,
 * src/http/mobile/page/mobile.js): building elements, the page's alert region, and reading the
 * server's error answers. Served at /shared/assets/page-kit.js; both pages import it by the relative
 * address `../../shared/assets/page-kit.js`, which names this file on disk and its address alike.
 */

/**
 * The element with `id`. Returns it; throws when the page lacks it (a bug in the page).
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`#${id} is missing`);
  return element;
}

/**
 * Creates an element with attributes (`false` leaves one out, `true` sets it empty) and children
 * (text or elements). Returns it.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | boolean>} [attributes]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, children = []) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  element.append(...children);
  return element;
}

/** Shows an error the student must read in the page's `#alert` region (screen readers announce it at once). */
export function showError(/** @type {string} */ message) {
  const alert = byId('alert');
  alert.textContent = message;
  alert.hidden = false;
}

/** Empties and hides the page's `#alert` region. */
export function clearError() {
  const alert = byId('alert');
  alert.hidden = true;
  alert.textContent = '';
}

/**
 * "1 recording part", "3 recording parts". Returns the words.
 * @param {number} count
 */
export function parts(count) {
  return count === 1 ? '1 recording part' : `${count} recording parts`;
}

/** A refused or failed API call: the HTTP status (0 when the server could not be reached) and the sentence to show. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * The server's own sentence in an error answer (`{"error": ...}`). Returns it, or `fallback`.
 * @param {unknown} json
 * @param {string} fallback
 */
export function errorOf(json, fallback) {
  if (typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'string') {
    return json.error;
  }
  return fallback;
}

/**
 * Parses a JSON answer. Returns its value, or null for an empty or unreadable one.
 * @param {string} text
 * @returns {unknown}
 */
export function parseJson(text) {
  try {
    return text === '' ? null : /** @type {unknown} */ (JSON.parse(text));
  } catch {
    return null;
  }
}

/**
 * Sends one request to a page's JSON API: `body` as multipart (FormData) or JSON. Returns the
 * answer's status and parsed body, whatever the status; rejects only when no answer came (the
 * server could not be reached), which each page words for its own reader.
 * @param {string} url
 * @param {string} method
 * @param {Record<string, unknown> | FormData} [body]
 * @returns {Promise<{ status: number, ok: boolean, json: unknown }>}
 */
export async function requestJson(url, method, body) {
  /** @type {RequestInit} */
  const init = { method, headers: { accept: 'application/json' } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
  }
  const response = await fetch(url, init);
  return { status: response.status, ok: response.ok, json: parseJson(await response.text()) };
}

/**
 * Sleeps that can be cut short: `pause(ms)` waits `ms`, or less when `wakeAll()` is called first
 * (the connection came back, so retries waiting on it can go now). Returns the pair.
 */
export function wakeableSleeps() {
  /** @type {Set<() => void>} */
  const wakers = new Set();
  /** @param {number} ms */
  const pause = (ms) =>
    new Promise((resolve) => {
      const wake = () => {
        window.clearTimeout(timer);
        wakers.delete(wake);
        resolve(undefined);
      };
      const timer = window.setTimeout(wake, ms);
      wakers.add(wake);
    });
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  return { pause, wakeAll };
}
