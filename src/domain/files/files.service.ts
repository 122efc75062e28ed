import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { sniffContentType } from '../../storage/content-type.ts';
import type { UrlSigner } from '../../storage/signed-url.ts';
import { type ByteRange, type ExpiringAddress, type Storage, StorageMissing } from '../../storage/storage.ts';
import type { Upload } from '../../storage/upload.ts';
import type { Clock } from '../clock.ts';
import { UnsupportedMediaType } from '../errors.ts';
import type { StoredFile } from './file.ts';
import { deleteFiles, findFile, insertFile } from './files.repository.ts';

export interface FilesService {
  /**
   * Keeps an upload for good: recognises its type from its content, checks it against `allowed`,
   * stores the bytes sealed under the data key of `instituteId` (the institute whose data it is) and
   * records the file. Returns the record; throws UnsupportedMediaType, DataKeyUnavailable.
   */
  keep(upload: Upload, allowed: readonly string[], instituteId: number): Promise<StoredFile>;
  /**
   * Stores a generated stream (an export, a recording chunk) under a known type, sealed under the data
   * key of `meta.instituteId`. Returns the record.
   */
  keepStream(
    body: Readable,
    meta: { originalName: string; contentType: string; maxBytes?: number; instituteId: number },
  ): Promise<StoredFile>;
  /** The record of a file, or undefined. */
  find(id: number): Promise<StoredFile | undefined>;
  /** Opens a file's bytes. Throws StorageMissing when the object is gone. */
  open(file: StoredFile): Promise<Readable>;
  /**
   * Opens bytes `range.start` to `range.end` (included) of a file, or returns undefined when the
   * storage cannot read part of an object. Throws StorageMissing when the object is gone.
   */
  openRange(file: StoredFile, range: ByteRange): Promise<Readable | undefined>;
  /**
   * Forgets files: records first, then the stored objects (an object left behind by a crash in
   * between is unreachable garbage, never a record pointing at nothing).
   */
  remove(ids: readonly (number | null)[]): Promise<void>;
  /**
   * An expiring address of a file, valid `seconds` from now: the storage's own presigned address
   * when it has them (the sealing storage has none: its objects are decrypted on the way out), otherwise
   * `{PUBLIC_URL}/files/<id>?expires=...&signature=...`. Returns it
   * with its expiry (epoch ms); throws StorageMissing when presigning for a file that has no record.
   */
  address(fileId: number, seconds: number): Promise<ExpiringAddress>;
  /** True when `address` gives the storage's own presigned addresses (never for the sealing storage). */
  readonly presigns: boolean;
  /**
   * Each item with an expiring address of its `fileId` (as `address` gives), in order, leaving out
   * the items whose file was removed after they were read. Returns them with `url` and
   * `urlExpiresAt` (epoch ms).
   */
  withAddresses<T extends { readonly fileId: number }>(
    items: readonly T[],
    seconds: number,
  ): Promise<(T & { readonly url: string; readonly urlExpiresAt: number })[]>;
}

/**
 * Builds the files service over the database (records), the storage (bytes) and the URL signer
 * (addresses when the storage has none of its own). Returns it; building it throws nothing.
 */
export function createFilesService(deps: {
  db: Db;
  clock: Clock;
  storage: Storage;
  signer: UrlSigner;
  logger: Logger;
}): FilesService {
  const { db, clock, storage, signer, logger } = deps;
  const service: FilesService = {
    async keep(upload, allowed, instituteId) {
      const contentType = sniffContentType(upload.head, upload.fileName);
      if (contentType === undefined || !allowed.includes(contentType)) {
        // Named by what the content is, never by what the client declared (which may be an allowed type).
        throw new UnsupportedMediaType(
          contentType === undefined ? 'File type not allowed' : `File type not allowed: ${contentType}`,
        );
      }
      const stored = await storage.put(fs.createReadStream(upload.path), { institute: instituteId });
      return insertFile(db, {
        storageKey: stored.key,
        originalName: upload.fileName,
        contentType,
        size: stored.size,
        sha256: stored.sha256,
        createdAt: clock.now(),
      });
    },

    async keepStream(body, meta) {
      const stored = await storage.put(
        body,
        meta.maxBytes === undefined
          ? { institute: meta.instituteId }
          : { institute: meta.instituteId, maxBytes: meta.maxBytes },
      );
      return insertFile(db, {
        storageKey: stored.key,
        originalName: meta.originalName,
        contentType: meta.contentType,
        size: stored.size,
        sha256: stored.sha256,
        createdAt: clock.now(),
      });
    },

    find: (id) => findFile(db, id),

    presigns: storage.presign !== undefined,

    open: (file) => storage.get(file.storageKey),

    async openRange(file, range) {
      return storage.getRange === undefined ? undefined : storage.getRange(file.storageKey, range);
    },

    async remove(ids) {
      const present = ids.filter((id): id is number => id !== null);
      const files = (await Promise.all(present.map((id) => findFile(db, id)))).filter(
        (file): file is StoredFile => file !== undefined,
      );
      await deleteFiles(db, present);
      for (const file of files) {
        try {
          await storage.delete(file.storageKey);
        } catch (error) {
          logger.warn({ err: error, key: file.storageKey }, 'stored object not removed');
        }
      }
    },

    async address(fileId, seconds) {
      if (storage.presign === undefined) return signer.sign(fileId, clock.now(), seconds);
      const file = await findFile(db, fileId);
      if (file === undefined) throw new StorageMissing(`no file ${fileId}`);
      return storage.presign(file.storageKey, {
        seconds,
        fileName: file.originalName,
        contentType: file.contentType,
        now: clock.now(),
      });
    },

    async withAddresses(items, seconds) {
      const linked = [];
      for (const item of items) {
        try {
          const address = await service.address(item.fileId, seconds);
          linked.push({ ...item, url: address.url, urlExpiresAt: address.expiresAt });
        } catch (error) {
          // Removed between the two reads: the file is gone, so is its entry.
          if (!(error instanceof StorageMissing)) throw error;
        }
      }
      return linked;
    },
  };
  return service;
}
