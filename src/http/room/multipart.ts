import { MalformedBody } from '../../domain/errors.ts';

/**
 * A streaming reader of one multipart/form-data body (RFC 7578), for the recording-chunk route:
 * parts come out one at a time, and a file part's bytes are handed on as slices of the buffers the
 * socket delivered, never copied or written anywhere first. Only the few bytes that may hold a
 * boundary split across two socket reads are joined.
 */

/** A text field. */
export interface FieldPart {
  readonly type: 'field';
  readonly name: string;
  readonly value: string;
}

/** A file part: its bytes are read with MultipartReader.fileData before the next part is asked for. */
export interface FilePart {
  readonly type: 'file';
  readonly name: string;
  readonly fileName: string;
  readonly contentType: string;
}

export type Part = FieldPart | FilePart;

/** Limits that keep a hostile body from making the reader hold much in memory. */
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_PARTS = 50;

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * The boundary of a `multipart/form-data; boundary=...` content type, or undefined when the header
 * names another type or no usable boundary (RFC 2046: 1 to 70 characters).
 */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const [type, ...parameters] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'multipart/form-data') return undefined;
  for (const parameter of parameters) {
    const match = /^\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s";]{1,70}))\s*$/i.exec(parameter);
    if (match !== null) return match[1] ?? match[2];
  }
  return undefined;
}

/** `name="value"` and `name=value` parameters of a Content-Disposition value, names lower-cased. */
function dispositionParameters(value: string): Map<string, string> {
  const found = new Map<string, string>();
  const parameter = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let match = parameter.exec(value); match !== null; match = parameter.exec(value)) {
    const [, name = '', quoted, bare] = match;
    found.set(
      name.toLowerCase(),
      quoted === undefined ? (bare ?? '').trim() : quoted.replace(/\\(.)/g, '$1'),
    );
  }
  return found;
}

/**
 * Reads the parts of a multipart body from `source` (the request's byte stream). Call `next()` for
 * each part; after a file part, `fileData()` gives its bytes (a part left unread is skipped by the
 * following `next()`). Errors: MalformedBody for a body that breaks the format or the limits, and
 * whatever the source throws (an aborted request).
 */
export class MultipartReader {
  readonly #source: AsyncIterator<Buffer>;
  /** `\r\n--boundary`: what ends every part (the body is read as if it began with a CRLF). */
  readonly #delimiter: Buffer;
  /** Bytes received and not yet handed out; often a slice of the latest socket buffer. */
  #pending: Buffer = CRLF;
  #state: 'data' | 'after-delimiter' | 'end' = 'data';
  #parts = 0;
  #started = false;

  /** True once the body began to be read. */
  get started(): boolean {
    return this.#started;
  }

  constructor(source: AsyncIterable<Buffer>, boundary: string) {
    this.#source = source[Symbol.asyncIterator]();
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /**
   * The next part, undefined after the last one. Whatever is left of the current part (or of the
   * preamble before the first) is skipped first. Throws MalformedBody.
   */
  async next(): Promise<Part | undefined> {
    while (this.#state === 'data') await this.#readData();
    if (this.#state === 'end') return undefined;
    // After a delimiter: `--` closes the body, CRLF opens another part.
    await this.#need(2);
    if (this.#pending[0] === 0x2d && this.#pending[1] === 0x2d) {
      this.#state = 'end';
      await this.#discardRest();
      return undefined;
    }
    const headers = await this.#readHeaders();
    this.#parts += 1;
    if (this.#parts > MAX_PARTS) throw new MalformedBody('Too many parts in the multipart body');
    this.#state = 'data';
    const disposition = headers.get('content-disposition') ?? '';
    const parameters = dispositionParameters(disposition);
    const name = parameters.get('name') ?? '';
    const fileName = parameters.get('filename');
    if (fileName !== undefined) {
      return { type: 'file', name, fileName, contentType: headers.get('content-type') ?? '' };
    }
    return { type: 'field', name, value: await this.#readField() };
  }

  /**
   * The bytes of the current file part, as slices of the received buffers (valid until the caller
   * lets go of them). Ends at the part's end.
   */
  async *fileData(): AsyncGenerator<Buffer, void, undefined> {
    while (this.#state === 'data') {
      const data = await this.#readData();
      if (data.length > 0) yield data;
    }
  }

  /** The next slice of the current part's data; the state leaves `data` once its delimiter is passed. */
  async #readData(): Promise<Buffer> {
    const delimiter = this.#delimiter;
    for (;;) {
      const pending = this.#pending;
      const at = pending.indexOf(delimiter);
      if (at >= 0) {
        this.#pending = pending.subarray(at + delimiter.length);
        this.#state = 'after-delimiter';
        return pending.subarray(0, at);
      }
      // Everything but the last delimiter-length-minus-one bytes is certainly data.
      const safe = pending.length - (delimiter.length - 1);
      if (safe > 0) {
        this.#pending = pending.subarray(safe);
        return pending.subarray(0, safe);
      }
      const chunk = await this.#pull();
      if (chunk === undefined) throw new MalformedBody('The multipart body ended inside a part');
      if (pending.length === 0) {
        this.#pending = chunk;
        continue;
      }
      // The held-back bytes and the start of the new buffer are joined (a few dozen bytes at most)
      // to find a delimiter split across the two; the new buffer itself is never copied.
      const head = chunk.subarray(0, delimiter.length - 1);
      const joined = Buffer.concat([pending, head]);
      const split = joined.indexOf(delimiter);
      if (split >= 0) {
        this.#pending = chunk.subarray(split + delimiter.length - pending.length);
        this.#state = 'after-delimiter';
        return joined.subarray(0, split);
      }
      if (head.length < delimiter.length - 1) {
        // The new buffer was shorter than a delimiter: keep gathering.
        this.#pending = joined;
        continue;
      }
      // No delimiter starts in the held-back bytes, so they are data.
      this.#pending = chunk;
      return pending;
    }
  }

  /** The current part's value as UTF-8 text. Throws MalformedBody beyond MAX_FIELD_BYTES. */
  async #readField(): Promise<string> {
    const pieces: Buffer[] = [];
    let size = 0;
    while (this.#state === 'data') {
      const data = await this.#readData();
      size += data.length;
      if (size > MAX_FIELD_BYTES) throw new MalformedBody('A multipart field is too large');
      // Copied: a slice would keep the whole socket buffer alive.
      pieces.push(Buffer.from(data));
    }
    return Buffer.concat(pieces).toString('utf8');
  }

  /** A part's header lines, names lower-cased. Throws MalformedBody beyond MAX_HEADER_BYTES. */
  async #readHeaders(): Promise<Map<string, string>> {
    for (;;) {
      // The part's headers start after the CRLF that follows the delimiter.
      const end = this.#pending.indexOf(HEADER_END);
      if (end >= 0) {
        const text = this.#pending.subarray(0, end).toString('utf8');
        this.#pending = this.#pending.subarray(end + HEADER_END.length);
        const headers = new Map<string, string>();
        for (const line of text.split('\r\n')) {
          const colon = line.indexOf(':');
          if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        return headers;
      }
      if (this.#pending.length > MAX_HEADER_BYTES)
        throw new MalformedBody('Multipart part headers too large');
      const chunk = await this.#pull();
      if (chunk === undefined) throw new MalformedBody('The multipart body ended inside part headers');
      this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    }
  }

  /** Waits until at least `count` bytes are pending. Throws MalformedBody when the body ends first. */
  async #need(count: number): Promise<void> {
    while (this.#pending.length < count) {
      const chunk = await this.#pull();
      if (chunk === undefined)
        throw new MalformedBody('The multipart body ended without its closing boundary');
      this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    }
  }

  /** Reads and drops whatever follows the closing boundary (the epilogue). */
  async #discardRest(): Promise<void> {
    this.#pending = Buffer.alloc(0);
    while ((await this.#pull()) !== undefined) {
      // the epilogue carries nothing
    }
  }

  async #pull(): Promise<Buffer | undefined> {
    this.#started = true;
    const result = await this.#source.next();
    return result.done === true ? undefined : result.value;
  }
}
