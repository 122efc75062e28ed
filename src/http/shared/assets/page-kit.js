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
