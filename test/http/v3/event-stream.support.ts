/**
 * A small server-sent events client for the live-monitor suites, written from the format's
 * specification (lines of `field: value`, events separated by a blank line, `:` comments), as a
 * browser's EventSource reads it, but over node:http so a test can set any header and see the raw
 * answer.
 */
import http from 'node:http';

/** One dispatched event. `data` is parsed as JSON (the monitor's data always is). */
export interface StreamEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: unknown;
}

/** An open event stream, or the whole answer when the server answered something else. */
export interface EventStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Every event so far, in order. */
  readonly events: StreamEvent[];
  /** Every comment line so far (without the colon). */
  readonly comments: string[];
  /** The `retry:` values received. */
  readonly retries: number[];
  /** The body, when the answer was not a stream (an error); '' for a stream. */
  readonly text: string;
  /** Resolves when the server ended the stream (not when this client closed it). */
  readonly ended: Promise<void>;
  /**
   * Waits for the first event after the `from`-th (default: after every event seen so far when the
   * call is made) that is named `name` and satisfies `match`. Resolves with it; rejects after
   * `timeoutMs` (default 5 s) naming what it saw.
   */
  next(
    name: string,
    match?: (data: unknown) => boolean,
    options?: { timeoutMs?: number; from?: number },
  ): Promise<StreamEvent>;
  /** Drops the connection, as a browser tab that goes away. */
  close(): void;
}

/** Opens `url` with `headers` (Accept and credentials included by the caller). Resolves once the answer's headers arrive. */
export function openEventStream(url: string, headers: Record<string, string>): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = http.request(
      { hostname: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, headers },
      (response) => {
        const events: StreamEvent[] = [];
        const comments: string[] = [];
        const retries: number[] = [];
        const waiters = new Set<() => void>();
        const isStream = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
        let buffer = '';
        let text = '';
        let fields: { id?: string; event?: string; data: string[] } = { data: [] };
        let lastId: string | undefined;
        const notify = () => {
          for (const waiter of waiters) waiter();
        };
        const line = (raw: string) => {
          if (raw === '') {
            if (fields.data.length > 0) {
              lastId = fields.id ?? lastId;
              events.push({
                id: lastId,
                event: fields.event ?? 'message',
                data: JSON.parse(fields.data.join('\n')),
              });
            }
            fields = { data: [] };
            return;
          }
          if (raw.startsWith(':')) {
            comments.push(raw.slice(1).trim());
            return;
          }
          const at = raw.indexOf(':');
          const name = at === -1 ? raw : raw.slice(0, at);
          const value = at === -1 ? '' : raw.slice(at + 1).replace(/^ /, '');
          if (name === 'data') fields.data.push(value);
          else if (name === 'event') fields.event = value;
          else if (name === 'id') fields.id = value;
          else if (name === 'retry') retries.push(Number(value));
        };
        let resolveEnded: () => void = () => undefined;
        const ended = new Promise<void>((done) => {
          resolveEnded = done;
        });
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (!isStream) {
            text += chunk;
            return;
          }
          buffer += chunk;
          let at = buffer.search(/\r\n|\r|\n/);
          while (at !== -1) {
            const length = buffer.startsWith('\r\n', at) ? 2 : 1;
            line(buffer.slice(0, at));
            buffer = buffer.slice(at + length);
            at = buffer.search(/\r\n|\r|\n/);
          }
          notify();
        });
        response.on('end', () => {
          resolveEnded();
          notify();
        });
        response.on('error', () => undefined);
        const stream: EventStream = {
          status: response.statusCode ?? 0,
          headers: response.headers,
          events,
          comments,
          retries,
          get text() {
            return text;
          },
          ended,
          next(name, match = () => true, options = {}) {
            const from = options.from ?? events.length;
            const timeoutMs = options.timeoutMs ?? 5000;
            return new Promise((found, fail) => {
              const check = () => {
                const event = events.slice(from).find((item) => item.event === name && match(item.data));
                if (event === undefined) return;
                waiters.delete(check);
                clearTimeout(timer);
                found(event);
              };
              const timer = setTimeout(() => {
                waiters.delete(check);
                const seen = events.slice(from).map((item) => `${item.event} ${JSON.stringify(item.data)}`);
                fail(
                  new Error(`no ${name} event within ${timeoutMs} ms; saw: ${seen.join(' | ') || 'nothing'}`),
                );
              }, timeoutMs);
              waiters.add(check);
              check();
            });
          },
          close() {
            request.destroy();
          },
        };
        if (isStream) {
          resolve(stream);
          return;
        }
        response.on('end', () => resolve(stream));
      },
    );
    request.on('error', reject);
    request.end();
  });
}
