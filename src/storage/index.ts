import type { Config, StorageConfig } from '../config/config.ts';
import { type DataKeyring, NO_KEYS } from './keyring.ts';
import { createLocalStorage, sweepStaleParts } from './local.ts';
import { createSealingStorage } from './sealing.ts';
import type { ObjectStore, Storage } from './storage.ts';

/**
 * Where the bytes physically go: local disk under DATA_DIR, or the S3 bucket STORAGE_URL names
 * (credentials from the AWS SDK's usual sources). Returns it; contacts nothing until first used.
 * The AWS SDK is loaded only when S3 is configured: it is large, and most installations never need it.
 */
export async function createObjectStore(config: StorageConfig): Promise<ObjectStore> {
  if (config.kind === 'local') return createLocalStorage(config.root);
  const { createS3Storage } = await import('./s3.ts');
  return createS3Storage(config);
}

/**
 * The configured file storage, sealing every object under its institute's data key from `keyring`
 * (docs/storage.md, "Encryption at rest"); without a keyring it can only remove objects and read
 * those stored before encryption (every other read fails closed with DataKeyUnavailable). Returns
 * it; contacts nothing until first used. On local disk, stale temporary files of interrupted writes
 * are removed first (sweepStaleParts).
 */
export async function createStorage(config: Config, keyring: DataKeyring = NO_KEYS): Promise<Storage> {
  // Leftovers of writes cut by a killed process; file times are wall-clock, so is the comparison.
  if (config.storage.kind === 'local') await sweepStaleParts(config.storage.root, Date.now());
  return createSealingStorage(await createObjectStore(config.storage), keyring);
}
