/** A stored file's record: where the bytes are and what they are. */
export interface StoredFile {
  readonly id: number;
  readonly storageKey: string;
  readonly originalName: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
  readonly createdAt: number;
}
