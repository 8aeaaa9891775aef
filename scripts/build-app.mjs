// `npm run build:app`: builds dist/app/ (see bin/app-build.js), which `store-api` then runs instead of the sources.
import { buildApp } from '../bin/app-build.js';

const started = Date.now();
const dir = await buildApp();
console.log(`built ${dir} in ${Math.round(Date.now() - started)} ms`);
