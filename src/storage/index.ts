import type { Config } from '../config/config.ts';
import { createLocalStorage } from './local.ts';
import type { Storage } from './storage.ts';

/**
 * The configured file storage: local disk under DATA_DIR, or the S3 bucket STORAGE_URL names
 * (credentials from the AWS SDK's usual sources). Returns it; contacts nothing until first used.
 * The AWS SDK is loaded only when S3 is configured: it is large, and most installations never need it.
 */
export async function createStorage(config: Config): Promise<Storage> {
  if (config.storage.kind === 'local') return createLocalStorage(config.storage.root);
  const { createS3Storage } = await import('./s3.ts');
  return createS3Storage(config.storage);
}
