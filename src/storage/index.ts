import type { Config } from '../config/config.ts';
import { createLocalStorage } from './local.ts';
import { createS3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

/**
 * The configured file storage: local disk under DATA_DIR, or the S3 bucket STORAGE_URL names
 * (credentials from the AWS SDK's usual sources). Returns it; contacts nothing until first used.
 */
export function createStorage(config: Config): Storage {
  if (config.storage.kind === 'local') return createLocalStorage(config.storage.root);
  return createS3Storage(config.storage);
}
