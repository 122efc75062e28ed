/**
 * Builds web/ (dist/web: the console and the candidate pages' scripts) when the build is missing, so
 * `npm start` and `npm test` work on a checkout where `npm ci` ran without its prepare step (e.g.
 * `--ignore-scripts`). A build that is present is left alone: `npm run build:web` rebuilds on purpose.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
if (!fs.existsSync(path.join(root, 'dist/web/.vite/manifest.json'))) {
  console.log('ensure-web: building web/ (dist/web)');
  const vite = path.join(root, 'node_modules/.bin/vite');
  const result = spawnSync(vite, ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error('ensure-web: the web build failed (see above)');
    process.exit(result.status ?? 1);
  }
}
