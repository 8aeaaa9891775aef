#!/usr/bin/env node
// The command runs the TypeScript sources through tsx, so `npx store-api` and `npm start` need no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
