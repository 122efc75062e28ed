/**
 * Recognises a file's type from its first bytes, so an upload is judged by what it is rather than
 * by what the client declared. Returns a media type, or undefined for content it does not know.
 */
export function sniffContentType(head: Buffer, fileName: string): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((byte, index) => head[index] === byte);
  const ascii = (offset: number, text: string) =>
    head.subarray(offset, offset + text.length).toString('latin1') === text;
  if (ascii(0, '%PDF-')) return 'application/pdf';
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  if (starts(0x1a, 0x45, 0xdf, 0xa3)) return 'video/webm';
  if (ascii(4, 'ftyp')) return 'video/mp4';
  if (ascii(0, 'OggS')) return 'audio/ogg';
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) return zipFamily(fileName);
  if (looksLikeText(head)) return 'text/plain';
  return undefined;
}

const ZIP_BASED: Readonly<Record<string, string>> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
};

/** Office documents are zip archives; the extension tells which kind (the content is a zip either way). */
function zipFamily(fileName: string): string {
  const extension = fileName.toLowerCase().split('.').pop() ?? '';
  return ZIP_BASED[extension] ?? 'application/zip';
}

/** Text: decodes as UTF-8 and holds no control characters but tab, newline, carriage return and form feed. */
function looksLikeText(head: Buffer): boolean {
  if (head.length === 0) return false;
  // A multi-byte character cut at the end of the sample is not a reason to refuse.
  const sample = head.length >= 4 ? head.subarray(0, head.length - 3) : head;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(sample);
  } catch {
    return false;
  }
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const allowedControl = code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
    if ((code < 0x20 && !allowedControl) || code === 0x7f) return false;
  }
  return true;
}

/** What instruction-document attachments may be: documents, images and plain text. */
export const ATTACHMENT_TYPES: readonly string[] = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'text/plain',
  'application/zip',
  ...Object.values(ZIP_BASED),
];

/** What a photo (ID card, face) may be. */
export const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
