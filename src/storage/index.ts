import type { Config } from '../config/config.ts';
import { createLocalStorage, sweepStaleParts } from './local.ts';
import type { Storage } from './storage.ts';

/**
 * The configured file storage: local disk under DATA_DIR, or the S3 bucket STORAGE_URL names
 * (credentials from the AWS SDK's usual sources). Returns it; contacts nothing until first used.
 * On local disk, stale temporary files of interrupted writes are removed first (sweepStaleParts).
 * The AWS SDK is loaded only when S3 is configured: it is large, and most installations never need it.
 */
export async function createStorage(config: Config): Promise<Storage> {
  if (config.storage.kind === 'local') {
    const storage = createLocalStorage(config.storage.root);
    // Leftovers of writes cut by a killed process; file times are wall-clock, so is the comparison.
    await sweepStaleParts(config.storage.root, Date.now());
    return storage;
  }
  const { createS3Storage } = await import('./s3.ts');
  return createS3Storage(config.storage);
}
