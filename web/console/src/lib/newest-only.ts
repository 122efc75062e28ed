/**
 * A list screen starts a new request whenever its filter, sort or page changes, and an answer to
 * an older request can arrive after a newer one. Each load takes a ticket first; only the holder of
 * the newest ticket may write what it received, so a slow old answer never replaces a fresh list.
 */
export interface NewestOnly {
  /** Takes a ticket for a request about to start. */
  take(): number;
  /** Whether the request holding this ticket is still the newest one started. */
  isNewest(ticket: number): boolean;
}

export function newestOnly(): NewestOnly {
  let newest = 0;
  return {
    take: () => ++newest,
    isNewest: (ticket) => ticket === newest,
  };
}
