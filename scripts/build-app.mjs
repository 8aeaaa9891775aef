// `npm run build:app [-- --force]`: builds dist/app/ (see bin/app-build.js), which `store-api` then runs instead of
// the sources; nothing to do while the newest build is fresh (the tests and benchmarks call it before they start).
import { buildApp, freshBuild } from '../bin/app-build.js';

const fresh = process.argv.includes('--force') ? undefined : freshBuild();
if (fresh) {
  console.log(`build ${fresh} is fresh`);
} else {
  const started = Date.now();
  const dir = await buildApp();
  console.log(`built ${dir} in ${Date.now() - started} ms`);
}
