// Makes the console's screenshots in docs/ (1280×800): the credentials page showing a new secret, a
// webhook's delivery log, and the Data browser's orders filtered by status. A throwaway SQLite store, a receiver on loopback and Debian's Chromium; nothing
// leaves the machine. Run: node --import tsx scripts/console-screenshots.ts [--phone DIR] (DIR: 375 px shots too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { seedStore } from '../src/seed/seed.ts';
import { startServer } from '../src/server.ts';
import { startReceiver } from '../test/events/webhooks/receiver.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const ADMIN_TOKEN = 'screenshot-admin-token-0123456789abcdefghij';
const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const phoneIndex = process.argv.indexOf('--phone');
const phoneDir = phoneIndex > 0 ? resolve(process.argv[phoneIndex + 1]) : undefined;

const dir = mkdtempSync(join(tmpdir(), 'console-shots-'));
const url = `sqlite:${join(dir, 'store.db')}`;
const store = openStore(url);
await migrateToLatest(store.db);
await seedStore(store, { products: 50, orders: 10, seed: 7 });
const receiver = await startReceiver();
// The third delivery fails once: the log then shows a retry waiting, with the receiver's answer.
const seen: string[] = [];
receiver.respond = (m, n) => {
  if (!seen.includes(m.id)) seen.push(m.id);
  return seen.indexOf(m.id) === 2 && n === 0 ? 503 : 200;
};
const config = loadConfig({ DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_SCHEDULE: '900,3600' }, {});
const server = await startServer(config, { store, logger: false });
config.publicUrl = server.url;
const base = server.url;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });

const admin = (method: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function shoot(page: Page, file: string): Promise<void> {
  await page.screenshot({ path: file });
  process.stdout.write(`${file}\n`);
}

try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${base}/admin`);
  await page.getByRole('textbox', { name: 'Admin token' }).fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  for (const [name, scopes] of [['Price comparison feed', ['products:read', 'categories:read', 'brands:read']], ['Warehouse sync', ['products:read', 'orders:read', 'changes:read']]] as const) {
    await admin('POST', '/admin/api/credentials', { name, scopes });
  }
  await page.getByRole('link', { name: 'New credential' }).click();
  await page.getByLabel('Name', { exact: true }).fill('ERP');
  await page.getByLabel('products:read').check();
  await page.getByLabel('orders:read').check();
  if (phoneDir) await page.setViewportSize({ width: 375, height: 800 });
  if (phoneDir) await page.screenshot({ path: join(phoneDir, 'console-new-credential-phone.png'), fullPage: true });
  if (phoneDir) await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'Create credential' }).click();
  await page.getByRole('button', { name: 'Copy secret' }).waitFor();
  await shoot(page, join(DOCS, 'console-credentials.png'));
  if (phoneDir) {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: join(phoneDir, 'console-secret-phone.png'), fullPage: true });
    await page.goto(`${base}/admin/credentials`);
    await page.screenshot({ path: join(phoneDir, 'console-credentials-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${base}/admin/credentials`);
    await page.screenshot({ path: join(phoneDir, 'console-credentials-list.png') });
  }

  await page.goto(`${base}/admin/webhooks/new`);
  await page.getByLabel('Receiver URL').fill(receiver.url);
  await page.getByLabel('Description').fill('ERP: stock and prices');
  await page.locator('#event-product-all').check();
  await page.locator('#event-order-status-changed').check();
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await page.getByRole('link', { name: 'Done, I have copied it' }).click();
  const hookPage = page.url();
  for (let id = 1; id <= 5; id++) {
    await admin('PATCH', `/admin/api/products/${id}`, { stock: 10 + id });
    await receiver.waitFor(() => new Set(receiver.received.map((r) => r.id)).size >= id, 10_000, `delivery ${id}`);
  }
  await new Promise((r) => setTimeout(r, 500));
  await page.goto(hookPage);
  await page.getByRole('heading', { name: 'Delivery log' }).scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shoot(page, join(DOCS, 'console-webhooks.png'));
  if (phoneDir) {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: join(phoneDir, 'console-webhooks-phone.png'), fullPage: true });
    await page.goto(`${base}/admin/usage`);
    await page.screenshot({ path: join(phoneDir, 'console-usage-phone.png'), fullPage: true });
    await page.goto(`${base}/admin/sync`);
    await page.screenshot({ path: join(phoneDir, 'console-sync-phone.png'), fullPage: true });
  }

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}/admin/data/orders`);
  await page.getByRole('textbox', { name: 'status' }).fill('new,paid,processing,shipped,delivered');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('link', { name: 'Download CSV' }).waitFor();
  await shoot(page, join(DOCS, 'console-data.png'));
  if (phoneDir) {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: join(phoneDir, 'console-data-phone.png'), fullPage: true });
    await page.getByRole('link', { name: /^Order \d+$/ }).first().click();
    await page.screenshot({ path: join(phoneDir, 'console-order-phone.png'), fullPage: true });
  }
} finally {
  await browser.close();
  await server.stop();
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
}
