import { type ApiClient, type CallOptions, fillPath } from './client.ts';
import { type HttpAnswer, httpRequest } from './http.ts';
import { type FilePart, multipartBody } from './multipart.ts';
import type { Scalar } from './signing.ts';

/**
 * Sends a signed V2 multipart request as a V2 integrator's client does: `api_token`, the text fields
 * and the route parameters are signed (ApiClient.sign for V2), the file parts are not; no header
 * carries the token and no Accept is needed. `options` work as for ApiClient.v2 (a wrong signature,
 * unsigned, extra headers). Returns the answer.
 */
export function v2Multipart(
  client: ApiClient,
  method: string,
  template: string,
  params: Record<string, Scalar>,
  files: readonly FilePart[],
  options: CallOptions = {},
): Promise<HttpAnswer> {
  const { path, route } = fillPath(template, params);
  const sent = client.sign(params, route, 'v2', options);
  const fields = Object.fromEntries(
    Object.entries(sent).map(([name, value]) => [name, value === null ? '' : String(value)]),
  );
  const { body, contentType } = multipartBody(fields, files);
  const headers: Record<string, string> = { 'content-type': contentType, ...options.headers };
  for (const name of options.omitHeaders ?? []) delete headers[name];
  return httpRequest({ url: `${client.baseUrl}/api${path}`, method, headers, body });
}
