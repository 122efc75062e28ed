import crypto from 'node:crypto';
import { type ApiClient, type CallOptions, fillPath, V3_ACCEPT } from './client.ts';
import { type HttpAnswer, httpRequest } from './http.ts';
import type { Scalar } from './signing.ts';

/** One file part of a multipart body. */
export interface FilePart {
  readonly field: string;
  readonly fileName: string;
  /** The declared type (the server judges the content itself). */
  readonly contentType: string;
  readonly bytes: Buffer;
}

/** Quotes a name for a Content-Disposition parameter as browsers do (HTML's multipart/form-data rules). */
function quoted(name: string): string {
  return name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/**
 * A multipart/form-data body built by hand, so the bytes are exactly these: text fields first, then
 * file parts with UTF-8 names as written. Returns the body and its Content-Type header.
 */
export function multipartBody(
  fields: Readonly<Record<string, string>>,
  files: readonly FilePart[],
): { body: Buffer; contentType: string } {
  const boundary = `----invigil-test-${crypto.randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n`, 'utf8'),
      Buffer.from(value, 'utf8'),
      Buffer.from('\r\n'),
    );
  }
  for (const file of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.field)}"; ` +
          `filename="${quoted(file.fileName)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
        'utf8',
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Sends a signed V3 multipart request as an integrator's client does: the text fields and the route
 * parameters are signed like any call (ApiClient.sign), the file parts are not. `options` work as for
 * ApiClient.v3 (a wrong signature, unsigned, extra or omitted headers).
 */
export function v3Multipart(
  client: ApiClient,
  method: string,
  template: string,
  params: Record<string, Scalar>,
  files: readonly FilePart[],
  options: CallOptions = {},
): Promise<HttpAnswer> {
  const { path, route } = fillPath(template, params);
  const sent = client.sign(params, route, 'v3', options);
  const fields = Object.fromEntries(
    Object.entries(sent).map(([name, value]) => [name, value === null ? '' : String(value)]),
  );
  const { body, contentType } = multipartBody(fields, files);
  const headers: Record<string, string> = {
    accept: V3_ACCEPT,
    authorization: `Token token=${client.credentials.apiToken}`,
    'content-type': contentType,
    ...options.headers,
  };
  for (const name of options.omitHeaders ?? []) delete headers[name];
  return httpRequest({ url: `${client.baseUrl}/api/v3${path}`, method, headers, body });
}

/** Sample contents, recognised (or not) by their first bytes the way the server sniffs them. */
export const SAMPLE = {
  /** A small PDF: the `%PDF-` signature, a binary comment line, one object and a trailer. */
  pdf: Buffer.concat([
    Buffer.from('%PDF-1.4\n%'),
    Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]),
    Buffer.from('\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  ]),
  /** A valid 1×1 PNG. */
  png: Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  ),
  /** The start of an ELF executable: allowed nowhere, whatever it is called. */
  elf: Buffer.concat([
    Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]),
    Buffer.alloc(8),
    crypto.randomBytes(240),
  ]),
  /** Bytes that are no known format and not text (a NUL first). */
  binary: Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x01]), crypto.randomBytes(300)]),
} as const;
