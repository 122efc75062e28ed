import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentDisposition } from './content-disposition.ts';
import { isStorageKey, newStorageKey } from './keys.ts';
import { Measure } from './measure.ts';
import { type ObjectStore, StorageMissing } from './storage.ts';

/** Where the objects go: a bucket, and for an S3-compatible service other than AWS its endpoint. */
export interface S3Location {
  readonly bucket: string;
  /** `http(s)://host[:port]` of an S3-compatible service; undefined for AWS itself. */
  readonly endpoint: string | undefined;
  /** undefined: the SDK's own lookup (AWS_REGION, the shared config file). */
  readonly region: string | undefined;
}

/**
 * Parts of a multipart upload. S3's minimum is 5 MiB; at most QUEUE_SIZE parts are held in memory
 * and sent at once per upload, which bounds an upload's memory to about 16 MiB.
 */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

/**
 * The S3 client for a location. Credentials are the SDK's: AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY (or any other source of its default chain), read by the SDK itself.
 * Returns the client; building it contacts nothing.
 */
export function createS3Client(location: S3Location): S3Client {
  const config: S3ClientConfig = {};
  if (location.region !== undefined) config.region = location.region;
  if (location.endpoint !== undefined) {
    config.endpoint = location.endpoint;
    // Self-hosted services (MinIO, Ceph, Garage, s3rver) serve buckets by path, not by host name.
    config.forcePathStyle = true;
    // Such services ignore the region, but the SDK refuses to sign without one.
    config.region ??= 'us-east-1';
    // Not every S3-compatible service understands the SDK's default CRC32 checksums (sent as
    // aws-chunked trailers on streams); the bytes' integrity is ours anyway (SHA-256 in Measure).
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  return new S3Client(config);
}

/** True when S3 says there is no such object. */
function isMissing(error: unknown): boolean {
  if (error instanceof NoSuchKey) return true;
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404;
}

/**
 * Files in an S3 bucket (AWS or any S3-compatible service). A write streams through Measure into a
 * multipart upload that is completed only once the whole stream has arrived within the limit, so a
 * failed or refused upload never becomes an object; the multipart upload is aborted. Expiring
 * addresses are S3 presigned GET URLs that make S3 answer with the original file name and type.
 * Returns the storage; `client` is for tests that bring their own.
 */
export function createS3Storage(
  location: S3Location,
  client: S3Client = createS3Client(location),
): ObjectStore {
  const Bucket = location.bucket;

  function checked(key: string): string {
    if (!isStorageKey(key)) throw new StorageMissing(`not a storage key: ${key}`);
    return key;
  }

  return {
    async put(body, options) {
      const key = newStorageKey();
      const measure = new Measure(
        options.maxBytes ?? Number.POSITIVE_INFINITY,
        options.headBytes ?? 0,
        options.inspect,
      );
      // The upload reads a plain stream: lib-storage would take Measure's running `size` for the
      // length of the whole body.
      const outgoing = new PassThrough();
      let streamFailure: unknown;
      measure.once('error', (error) => {
        streamFailure ??= error;
      });
      const piping = pipeline(body, measure, outgoing).catch(() => undefined);
      const upload = new Upload({
        client,
        params: { Bucket, Key: key, Body: outgoing },
        partSize: PART_SIZE,
        queueSize: QUEUE_SIZE,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (error) {
        // The stream's own failure (over the limit, a broken request) is the reason, even when
        // aborting the multipart upload then failed too.
        const failure = streamFailure ?? error;
        outgoing.destroy();
        await piping;
        throw failure;
      }
      await piping;
      return { key, size: measure.size, sha256: measure.hash.digest('hex') };
    },

    async get(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: checked(key) }));
        if (!(answer.Body instanceof Readable)) throw new Error(`S3 sent no body stream for ${key}`);
        return answer.Body;
      } catch (error) {
        if (isMissing(error)) throw new StorageMissing(`no object ${key}`);
        throw error;
      }
    },

    async getRange(key, range) {
      try {
        const answer = await client.send(
          new GetObjectCommand({ Bucket, Key: checked(key), Range: `bytes=${range.start}-${range.end}` }),
        );
        if (!(answer.Body instanceof Readable)) throw new Error(`S3 sent no body stream for ${key}`);
        return answer.Body;
      } catch (error) {
        if (isMissing(error)) throw new StorageMissing(`no object ${key}`);
        throw error;
      }
    },

    async size(key) {
      try {
        const answer = await client.send(new HeadObjectCommand({ Bucket, Key: checked(key) }));
        return answer.ContentLength ?? 0;
      } catch (error) {
        if (isMissing(error)) throw new StorageMissing(`no object ${key}`);
        throw error;
      }
    },

    async delete(key) {
      // S3 answers a delete of a missing key with success, as the interface wants.
      await client.send(new DeleteObjectCommand({ Bucket, Key: checked(key) }));
    },

    async presign(key, options) {
      // SigV4 dates have whole seconds; the expiry reported is the one S3 enforces.
      const signedAt = Math.floor(options.now / 1000) * 1000;
      const command = new GetObjectCommand({
        Bucket,
        Key: checked(key),
        ResponseContentDisposition: contentDisposition(options.fileName),
        ResponseContentType: options.contentType,
        ResponseCacheControl: 'private, no-store',
      });
      const url = await getSignedUrl(client, command, {
        expiresIn: options.seconds,
        signingDate: new Date(signedAt),
      });
      return { url, expiresAt: signedAt + options.seconds * 1000 };
    },
  };
}
