/**
 * Remembers, for this tab, which version of the privacy panel the candidate accepted on a page, so
 * a reload during the setup does not ask again for the same panel; a changed panel (another
 * version) is asked for again. The server keeps the acceptance itself with the start (docs/room.md
 * "Privacy panel"); this is only the page's memory until then.
 */

/** The storage key of one page's acceptance (`room` or `phone`, and the token the page was opened with). */
function keyOf(page: 'room' | 'phone', token: string): string {
  return `invigil.privacy.${page}.${token}`;
}

/** Returns the version accepted in this tab, or '' when none (or storage is unavailable). */
export function acceptedPrivacyVersion(page: 'room' | 'phone', token: string): string {
  try {
    return sessionStorage.getItem(keyOf(page, token)) ?? '';
  } catch {
    return '';
  }
}

/** Keeps `version` as accepted in this tab; storage that refuses only costs a second reading. */
export function rememberPrivacyAcceptance(page: 'room' | 'phone', token: string, version: string): void {
  try {
    sessionStorage.setItem(keyOf(page, token), version);
  } catch {
    // Private browsing with storage off: the panel is asked for again after a reload.
  }
}
