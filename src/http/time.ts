/** V3 time format: ISO 8601 in UTC with milliseconds; null stays null. */
export function isoTime(millis: number | null): string | null {
  return millis === null ? null : new Date(millis).toISOString();
}

/** V2 time format: whole epoch seconds; null stays null. */
export function epochSeconds(millis: number | null): number | null {
  return millis === null ? null : Math.floor(millis / 1000);
}
