/**
 * The console's routes: paths under /console mapped to screens, with the browser's history. Links
 * are ordinary `<a href>` elements; `navigate` is for moves after an action (save, sign-in).
 */

import { readQuery } from './query';

export { readQuery, writeQuery } from './query';

export const BASE = '/console';

/** The path after /console ("/" for the console's home) and the query, kept current. */
export const location = $state({ path: pathOf(window.location.pathname), search: window.location.search });

function pathOf(pathname: string): string {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return rest === '' ? '/' : rest.replace(/\/+$/, '') || '/';
}

/** Goes to `path` (under /console, e.g. "/exams/4"), adding a history entry unless `replace`. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${path === '/' ? '' : path}`;
  if (options.replace === true) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  sync();
}

function sync(): void {
  location.path = pathOf(window.location.pathname);
  location.search = window.location.search;
}

window.addEventListener('popstate', sync);

/** Same-origin link clicks inside the console move without reloading the page. */
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  const anchor = (event.target as Element | null)?.closest('a');
  if (anchor === null || anchor === undefined || anchor.target !== '' || anchor.hasAttribute('download'))
    return;
  const url = new URL(anchor.href, window.location.href);
  if (url.origin !== window.location.origin || !url.pathname.startsWith(BASE)) return;
  event.preventDefault();
  window.history.pushState(null, '', url.pathname + url.search);
  sync();
});

/** A console href for `path` ("/exams/4" → "/console/exams/4"). */
export function href(path: string): string {
  return `${BASE}${path === '/' ? '' : path}`;
}

/**
 * Matches `path` against a pattern such as "/exams/:id/students"; returns the named parts, or
 * undefined when it does not match.
 */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i += 1) {
    const part = want[i] ?? '';
    const value = got[i] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return undefined;
  }
  return params;
}

/** One query parameter of the current address, or null. */
export function queryParam(name: string): string | null {
  return readQuery(location.search)[name] ?? null;
}
