/**
 * The text/event-stream format (the HTML standard's "server-sent events"), read as its chunks arrive:
 * lines of `field: value`, a blank line ends an event, lines starting with `:` are comments, and a
 * line may end in CRLF, LF or CR. Pure, so unit tests read streams with the same code as the console.
 */

/** One event as the format defines it. */
export interface RawEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/**
 * Splits a text/event-stream body into events as its chunks arrive. `push` takes the next chunk
 * and returns the events it completed; a line split across chunks (or a CR at a chunk's end) waits
 * for the rest. `retry` holds the last `retry:` value.
 */
export class EventStreamParser {
  retry: number | undefined;
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private lastId: string | undefined;

  /** Feeds `chunk`; returns the events it completed, in order. */
  push(chunk: string): RawEvent[] {
    this.buffer += chunk;
    const events: RawEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      if (end < 0) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (this.buffer[end] === '\r' && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end);
      const width = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      this.buffer = this.buffer.slice(end + width);
      const event = this.line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  private line(line: string): RawEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    return undefined;
  }

  private dispatch(): RawEvent | undefined {
    if (this.id !== undefined) this.lastId = this.id;
    const event =
      this.data.length === 0
        ? undefined
        : { event: this.event === '' ? 'message' : this.event, data: this.data.join('\n'), id: this.lastId };
    this.event = '';
    this.data = [];
    this.id = undefined;
    return event;
  }
}
