import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** The one key pair s3rver accepts (its built-in dummy account). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** An S3-compatible server (s3rver) running inside the test process, over a temporary directory. */
export interface LocalS3 {
  /** `http://127.0.0.1:PORT` */
  readonly endpoint: string;
  readonly bucket: string;
  /** The STORAGE_URL that points the service at this server and bucket. */
  readonly storageUrl: string;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts s3rver on a random loopback port with one empty bucket, in a fresh temporary directory.
 * `detached`: the server never keeps the process alive (a server shared by a whole test file, whose
 * directory goes when the process exits). Returns it; the caller sets AWS credentials (see
 * S3RVER_CREDENTIALS) where the SDK reads them.
 */
export async function startLocalS3(options: { bucket?: string; detached?: boolean } = {}): Promise<LocalS3> {
  const bucket = options.bucket ?? 'bucket';
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  if (options.detached) {
    // s3rver keeps its node:http server here (not in its type declarations).
    const httpServer = (server as unknown as { httpServer: http.Server }).httpServer;
    httpServer.unref();
    httpServer.on('connection', (socket) => socket.unref());
    process.once('exit', () => fs.rmSync(directory, { recursive: true, force: true }));
  }
  return {
    endpoint,
    bucket,
    storageUrl: `s3://${bucket}?endpoint=${endpoint}&region=us-east-1`,
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
