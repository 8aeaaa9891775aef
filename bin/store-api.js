#!/usr/bin/env node
// Runs the newest build in dist/app/ when it is fresh (see app-build.js; `npm install` and `npm run build:app`
// make it), and otherwise the TypeScript sources through tsx, so that `npx store-api` and `npm start` need no
// build step and never run a build older than the sources. STORE_API_FROM_SOURCES=1 runs the sources always.
import { pathToFileURL } from 'node:url';
import { freshBuild } from './app-build.js';

const build = process.env.STORE_API_FROM_SOURCES === '1' ? undefined : freshBuild();
if (build) {
  await import(pathToFileURL(build).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
