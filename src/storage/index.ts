import { type Config, ConfigError } from '../config/config.ts';
import { createLocalStorage } from './local.ts';
import type { Storage } from './storage.ts';

/**
 * The configured file storage: local disk under DATA_DIR unless STORAGE_URL names S3.
 * Throws ConfigError for S3, which is not supported yet.
 */
export function createStorage(config: Config): Storage {
  if (config.storage.kind === 'local') return createLocalStorage(config.storage.root);
  throw new ConfigError('STORAGE_URL=s3://... is not supported yet; unset it to use local disk storage');
}
