import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root directory: the nearest folder above this module that holds a package.json. Files of the
 * package (package.json, the console's static files) are found from here rather than from a module's own URL,
 * because the same module runs from src/ (through tsx) and from the one-file-per-chunk build in dist/app/.
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

export const PACKAGE_ROOT = findRoot();
