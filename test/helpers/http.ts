import http from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  readonly bytes: Buffer;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  readonly json: unknown;
}

/** One raw HTTP exchange (node:http, so GET may carry a body and nothing is re-encoded). */
export function httpRequest(options: {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.url);
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const request = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'GET',
        headers,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, bytes, json });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}
