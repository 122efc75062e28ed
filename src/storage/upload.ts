/**
 * A file part of a multipart request, written to a temporary file while the request is read, so the
 * signature (which covers the other fields) can be checked before anything is stored for good.
 * The temporary file is removed once the response is sent.
 */
export interface Upload {
  /** The multipart field name (`document`, `file`). */
  readonly field: string;
  /** The client's file name: metadata only, never part of a storage path. */
  readonly fileName: string;
  /** The content type the client declared; the stored type comes from the content itself. */
  readonly declaredType: string;
  readonly path: string;
  readonly size: number;
  /** The first bytes, for recognising the content type. */
  readonly head: Buffer;
}
