/** Query strings as plain objects, for addresses that keep a screen's filters. */

/** The parameters of a query string ("?a=1&b=2") as a plain object (the last value of a repeated name). */
export function readQuery(search: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(search).entries());
}

/** A query string ("?a=1", or "" for none) from an object; empty values are left out. */
export function writeQuery(values: Record<string, string>): string {
  const text = Object.entries(values)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  return text === '' ? '' : `?${text}`;
}
