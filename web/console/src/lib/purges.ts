/**
 * The purge log in words (docs/retention.md): what each kind of purged media is, and sizes a
 * person reads. Shared by the retention tab and a session's legal hold.
 */
import type { paths } from '../../../shared/api-schema';
import { t } from '../../../shared/i18n.svelte.ts';
import { formatLocale } from './format-locale.ts';
import { wordsPair } from './words';

export type Purge =
  paths['/api/v3/purges']['get']['responses'][200]['content']['application/json']['purges'][number];
export type PurgeKind = Purge['kind'];

/** Every kind the service logs, in the order the filter offers them, with its words. */
export const PURGE_KIND_LABELS: readonly (readonly [PurgeKind, string])[] = [
  wordsPair('recording', 'console.purges.kindRecording'),
  wordsPair('recording_chunk', 'console.purges.kindRecordingChunk'),
  wordsPair('id_photo', 'console.purges.kindIdPhoto'),
  wordsPair('face_photo', 'console.purges.kindFacePhoto'),
  wordsPair('upload', 'console.purges.kindUpload'),
  wordsPair('incident', 'console.purges.kindIncident'),
  // Entries written before retention per kind (docs/retention.md) name both photos together.
  wordsPair('photo', 'console.purges.kindPhoto'),
];

/** The words for a kind ("Recordings"); the kind itself for one this console does not know. */
export function purgeKindLabel(kind: string): string {
  return PURGE_KIND_LABELS.find(([value]) => value === kind)?.[1] ?? kind;
}

const UNITS = [
  'console.purges.sizeKB',
  'console.purges.sizeMB',
  'console.purges.sizeGB',
  'console.purges.sizeTB',
] as const;

/** "512 bytes", "12 KB", "3.4 MB", "1.2 GB" (binary multiples, as file managers show them). */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return t('console.purges.sizeBytes', { count: bytes });
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = value < 10 ? 1 : 0;
  const size = new Intl.NumberFormat(formatLocale(), {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
  return t(UNITS[unit] ?? 'console.purges.sizeTB', { size });
}

/** "7 files" or "1 file". */
export function fileCount(files: number): string {
  return t('console.purges.fileCount', { count: files });
}
