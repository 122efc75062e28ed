/**
 * `attachment; filename=...` with an ASCII fallback and the exact UTF-8 name (RFC 6266). Returns the
 * header value; the local download route sends it, and S3 presigned addresses ask S3 to send it.
 */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
