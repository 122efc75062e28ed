/**
 * How the candidate's pages (the room, the phone page) talk to their JSON APIs: one request helper,
 * the server's error sentence, and sleeps a returning connection can cut short. The console has its
 * own typed client (web/console/src/lib/api.ts); these pages use the same generated types
 * (web/shared/api-schema.d.ts) through web/shared/candidate-api.ts.
 */

/**
 * A refused or failed API call: the HTTP status (0 when the server could not be reached), the
 * server's own sentence (English), and optionally the catalogue message the page shows instead
 * (web/shared/phrase.ts words the others by their status).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly phrase: { readonly key: string } | undefined;

  constructor(status: number, message: string, phrase?: { readonly key: string }) {
    super(message);
    this.status = status;
    this.phrase = phrase;
  }
}

/** The server's own sentence in an error answer (`{"error": ...}`). Returns it, or `fallback`. */
export function errorOf(json: unknown, fallback: string): string {
  if (typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'string') {
    return json.error;
  }
  return fallback;
}

/** Parses a JSON answer. Returns its value, or null for an empty or unreadable one. */
export function parseJson(text: string): unknown {
  try {
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

/** What one request answered: its status and parsed body. */
export interface JsonAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly json: unknown;
}

/**
 * Sends one request: `body` as multipart (FormData) or JSON. Returns the answer's status and parsed
 * body, whatever the status; rejects only when no answer came (the server could not be reached),
 * which each page words for its own reader.
 */
export async function requestJson(
  url: string,
  method: string,
  body?: Record<string, unknown> | FormData,
): Promise<JsonAnswer> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } };
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
export function wakeableSleeps(): { pause: (ms: number) => Promise<void>; wakeAll: () => void } {
  const wakers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        window.clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = window.setTimeout(wake, ms);
      wakers.add(wake);
    });
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  return { pause, wakeAll };
}
