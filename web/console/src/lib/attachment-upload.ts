/**
 * Sends one file to an attachments route as multipart (field `document`) with the staff session
 * cookie and CSRF header, reporting the share sent as it goes. XMLHttpRequest, because fetch has no
 * upload progress. The service judges the file (type from its bytes, size) and answers as V3 does.
 */

import type { paths } from '../../../shared/api-schema';
import { t } from '../../../shared/i18n.svelte.ts';

/** An attachment record as the V3 API answers it. */
export type Attachment =
  paths['/api/v3/exams/{exam_id}/attachments']['get']['responses'][200]['content']['application/json']['attachments'][number];

/** The V3 media type every /api/v3 request names in Accept. */
const V3_ACCEPT = 'application/vnd.procwise.v3';

export interface UploadAnswer {
  readonly status: number;
  /** The parsed JSON answer, or undefined when the answer was not JSON. */
  readonly body: unknown;
}

/** The CSRF token of the signed-in session, read from /auth/session (the API client keeps its own copy private). */
async function csrfToken(): Promise<string | undefined> {
  const answer = await fetch('/auth/session', { credentials: 'same-origin' });
  if (!answer.ok) return undefined;
  const body = (await answer.json()) as { csrf_token?: unknown };
  return typeof body.csrf_token === 'string' ? body.csrf_token : undefined;
}

/**
 * Uploads `file` to `url` in the multipart field `field`, calling `onProgress` with the share sent
 * (0 to 1). Returns the status and parsed answer; throws an Error when the connection fails.
 */
export async function uploadFile(
  url: string,
  field: string,
  file: File,
  onProgress: (share: number) => void,
): Promise<UploadAnswer> {
  const token = await csrfToken();
  const form = new FormData();
  form.append(field, file, file.name);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.setRequestHeader('accept', V3_ACCEPT);
    if (token !== undefined) request.setRequestHeader('x-csrf-token', token);
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    });
    request.addEventListener('load', () => {
      let body: unknown;
      try {
        body = JSON.parse(request.responseText) as unknown;
      } catch {
        body = undefined;
      }
      onProgress(1);
      resolve({ status: request.status, body });
    });
    request.addEventListener('error', () => reject(new Error(t('console.attachmentUpload.unreachable'))));
    request.addEventListener('abort', () => reject(new Error(t('console.attachmentUpload.stopped'))));
    request.send(form);
  });
}
