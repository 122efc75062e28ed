import type { LinkedSessionFile } from '../../domain/student-sessions/session-file.ts';
import { isoTime } from '../time.ts';

/** The V3 entry of a student session's files listing; `url` is the five-minute download address. */
export function presentSessionFileV3(file: LinkedSessionFile): Record<string, unknown> {
  return {
    kind: file.kind,
    sequence: file.sequence,
    file_name: file.fileName,
    content_type: file.contentType,
    file_size: file.fileSize,
    created_at: isoTime(file.createdAt),
    url: file.url,
    expires_at: isoTime(file.urlExpiresAt),
  };
}
