import type { ConsolePage } from './page.ts';
import { credentialsPage } from './pages/credentials.ts';
import { dataPage } from './pages/data.ts';
import { syncPage } from './pages/sync.ts';
import { usagePage } from './pages/usage.ts';
import { webhooksPage } from './pages/webhooks.ts';

/**
 * The console's sections, in the navigation's order. A section is one module: its routes and its entry here
 * (the first one is where /admin and a sign-in lead).
 */
export const CONSOLE_PAGES: readonly ConsolePage[] = [credentialsPage, webhooksPage, dataPage, usagePage, syncPage];
