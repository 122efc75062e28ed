/**
 * IANA time zone names, as the runtime's time zone database knows them. A zone is accepted when
 * `Intl` can format times in it and it is a name, not a UTC offset (`+01:00` is no IANA zone).
 */
const ZONES_BY_FOLDED_NAME = new Map<string, string>(
  [...Intl.supportedValuesOf('timeZone'), 'UTC'].map((zone) => [zone.toLowerCase(), zone]),
);

/** Offsets and other non-names that Intl also accepts. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/**
 * The time zone `text` names. Returns it as written, or in the database's spelling when only the
 * case differs from a listed zone (`europe/berlin` → `Europe/Berlin`); aliases (`Europe/Kiev`,
 * `Etc/UTC`) are kept as sent. Returns undefined when it names no zone.
 */
export function ianaTimeZone(text: string): string | undefined {
  const name = text.trim();
  if (!ZONE_NAME.test(name)) return undefined;
  const listed = ZONES_BY_FOLDED_NAME.get(name.toLowerCase());
  if (listed !== undefined) return listed;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}
