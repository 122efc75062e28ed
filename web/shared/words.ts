/**
 * Wording both candidate pages use (the exam room and the phone page): counts of recording parts,
 * sizes, clock readings and times. Kept in one place so the two pages say the same thing the same
 * way; step 16 moves the sentences into the message catalogues.
 */

/** "1 recording part", "3 recording parts". Returns the words. */
export function parts(count: number): string {
  return count === 1 ? '1 recording part' : `${count} recording parts`;
}

/** A size in bytes as a reader takes it in: "512 bytes", "40 KB", "2.5 MB". Returns the words. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A time as the student reads it: in the browser's own time zone, with that zone named (a student
 * abroad must not guess whether the exam office meant its zone or theirs). Returns the words.
 */
export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}

/** The browser's time zone by name (`Europe/Berlin`), or `fallback` when the browser names none. */
export function timeZoneName(fallback = 'your computer’s time zone'): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || fallback;
}

/**
 * A countdown reading: "1:05:09" past an hour, else "05:09", or "5:09" with `padMinutes` false
 * (the phone's large figures). Returns the words.
 */
export function clockText(seconds: number, padMinutes = true): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  const rest = pad(seconds % 60);
  if (hours > 0) return `${hours}:${pad(minutes)}:${rest}`;
  return `${padMinutes ? pad(minutes) : String(minutes)}:${rest}`;
}

/**
 * The sentences of the connection line (ConnectionBanner.svelte). Each page words them for its
 * reader ("when you are back online" in the room, "when the phone is back online" on the phone).
 */
export interface ConnectionWords {
  /** The connection is lost while recording parts are made or wait. */
  lostWaiting(waiting: number): string;
  /** The connection is lost and nothing is recorded. */
  lostIdle: string;
  /** Back, and `waiting` parts are still on their way. */
  sending(waiting: number): string;
  /** Back, and every part has been sent (shown for a few seconds). */
  sent: string;
}

/** "it" for one waiting part, "they" for several: the pronoun of the lost-connection sentence. */
export function itOrThey(count: number): string {
  return count === 1 ? 'it' : 'they';
}
