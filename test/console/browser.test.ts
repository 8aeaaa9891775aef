// The console in a real browser (Debian's Chromium through playwright-core) against a real server on loopback,
// as a new administrator would use it: sign in, create a credential from checkboxes and use its secret, narrow
// its scopes, disable it; subscribe a webhook, see a delivery in the log and replay it; browse orders in Data; a forged cross-site form
// changes nothing; sign out. Also: every control has an accessible name, and a phone-wide page does not scroll sideways.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { startReceiver, verify, type Receiver } from '../events/webhooks/receiver.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

// Under CI the browser must be there (.ci/run installs it); elsewhere a machine without it skips these tests.
if (!existsSync(CHROMIUM) && process.env.CI === 'true') throw new Error(`Chromium is required at ${CHROMIUM} under CI=true`);
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}`;

/** Controls that are visible and have no accessible name (a label, aria-label or aria-labelledby, or text). */
const unnamedControls = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll<HTMLElement>('input:not([type=hidden]), textarea, select, button, a[href]')]
    .filter((el) => el.offsetParent !== null || el.getClientRects().length > 0)
    .filter((el) => {
      const labelled = (el as HTMLInputElement).labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
      return !labelled && !(el.textContent ?? '').trim();
    })
    .map((el) => el.outerHTML.slice(0, 120)));

/** A page of another origin that posts a form to the console when opened: what a CSRF attack looks like. */
async function startForger(target: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><form method="post" action="${target}/admin/credentials">
      <input name="name" value="Forged"><input name="scopes" value="orders:read"></form><script>document.forms[0].submit()</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

for (const dialect of await dialects()) {
  describe(`the console in Chromium (${dialect})`, { skip, timeout: 180_000 }, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let receiver: Receiver;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let base: string;

    const api = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const tokenFor = async (clientId: string, clientSecret: string) => {
      const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }) });
      return { status: res.status, token: res.ok ? ((await res.json()) as { access_token: string }).access_token : '' };
    };

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: 5, orders: 2, seed: 11 });
      receiver = await startReceiver();
      const config = loadConfig({
        DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '100',
        RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', TOKEN_RATE_LIMIT_RPS: '1000', TOKEN_RATE_LIMIT_BURST: '1000',
      }, {});
      server = await startServer(config, { store: database.store, logger: false });
      base = server.url;
      // As `serve` does with --port 0: links and curl lines name the real port.
      config.publicUrl = base;
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      page = await context.newPage();
      // A step that cannot happen fails in seconds, not after Playwright's default 30 s.
      page.setDefaultTimeout(10_000);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await receiver?.stop();
      await database?.drop();
    });

    it('signs in with the admin token, by keyboard, into an HttpOnly SameSite=Strict session', async () => {
      await page.goto(`${base}/admin`);
      assert.equal(new URL(page.url()).pathname, '/admin/sign-in');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', 'the first stop skips to the content');
      await page.getByRole('textbox', { name: 'Admin token' }).fill('a wrong token');
      await page.getByRole('textbox', { name: 'Admin token' }).press('Enter');
      await page.getByRole('alert').filter({ hasText: 'not this store\'s admin token' }).waitFor();
      await page.getByRole('textbox', { name: 'Admin token' }).fill(ADMIN_TOKEN);
      await page.getByRole('textbox', { name: 'Admin token' }).press('Enter');
      await page.getByRole('heading', { level: 1, name: 'API credentials' }).waitFor();
      const [cookie] = await context.cookies(`${base}/admin/credentials`);
      assert.equal(cookie.name, 'sda_console');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Strict');
      assert.ok(cookie.expires > Date.now() / 1000, 'it has an expiry');
      assert.equal(await page.evaluate(() => document.cookie), '', 'no script can read it');
      assert.deepEqual(await unnamedControls(page), []);
    });

    let erp: { clientId: string; secret: string; token: string };

    it('creates "ERP" with products:read and orders:read, shows the secret once with a working copy button, and the token reads products but not categories', async () => {
      await page.getByRole('link', { name: 'New credential' }).click();
      assert.deepEqual(await unnamedControls(page), []);
      await page.getByLabel('Name', { exact: true }).fill('ERP');
      await page.getByLabel('products:read').check();
      await page.getByLabel('orders:read').check();
      await page.getByRole('button', { name: 'Create credential' }).click();
      await page.getByRole('heading', { name: '“ERP” is ready' }).waitFor();
      const clientId = await page.getByLabel('Client id').inputValue();
      const secret = await page.getByLabel('Client secret').inputValue();
      assert.match(secret, /^sds_[A-Za-z0-9_-]{43}$/);
      await page.getByRole('button', { name: 'Copy secret' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      assert.match(await page.getByLabel('Try it with curl').inputValue(), new RegExp(`client_secret=${secret}`));

      const { status, token } = await tokenFor(clientId, secret);
      assert.equal(status, 200);
      assert.equal((await api('GET', '/api/v2/products', token)).status, 200);
      assert.equal((await api('GET', '/api/v2/categories', token)).status, 403);
      assert.equal((await api('GET', '/api/v2/orders', token)).status, 200);
      erp = { clientId, secret, token };
    });

    it('unticking orders:read refuses orders; disabling refuses its token (401) at once', async () => {
      await page.getByRole('link', { name: 'Done, I have copied it' }).click();
      await page.getByRole('heading', { level: 1, name: 'ERP' }).waitFor();
      await page.getByLabel('orders:read').uncheck();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Changes saved' }).waitFor();
      assert.equal((await api('GET', '/api/v2/orders', erp.token)).status, 401, 'tokens with the old scopes ended');
      const fresh = await tokenFor(erp.clientId, erp.secret);
      assert.equal((await api('GET', '/api/v2/orders', fresh.token)).status, 403);
      assert.equal((await api('GET', '/api/v2/products', fresh.token)).status, 200);

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByRole('status').filter({ hasText: 'Credential disabled' }).waitFor();
      assert.equal((await api('GET', '/api/v2/products', fresh.token)).status, 401);
      assert.equal((await tokenFor(erp.clientId, erp.secret)).status, 401);
    });

    it('a forged form from another origin changes nothing (same-site: refused; cross-site: no cookie)', async () => {
      for (const host of ['127.0.0.1', 'localhost']) {
        const forger = await startForger(base);
        try {
          const answer = page.waitForResponse((r) => r.url() === `${base}/admin/credentials` && r.request().method() === 'POST');
          await page.goto(`http://${host}:${forger.port}/`);
          assert.equal((await answer).status(), host === 'localhost' ? 401 : 403, host);
        } finally {
          await forger.close();
        }
      }
      const names = (await database.store.db.selectFrom('credentials').select('name').execute()).map((r) => r.name);
      assert.ok(!names.includes('Forged'), names.join(', '));
    });

    it('subscribes a webhook to product events, sees the delivery in the log and replays it', async () => {
      await page.goto(`${base}/admin/webhooks`);
      await page.getByRole('link', { name: 'New subscription' }).click();
      assert.deepEqual(await unnamedControls(page), []);
      await page.getByLabel('Receiver URL').fill(receiver.url);
      await page.locator('#event-product-all').check();
      await page.getByRole('button', { name: 'Subscribe' }).click();
      const secret = await page.getByLabel('Signing secret').inputValue();
      assert.match(secret, /^whsec_/);
      await page.getByRole('link', { name: 'Done, I have copied it' }).click();

      const product = (await api('GET', '/api/v2/products?limit=1', (await tokenFor(...(await newReader()))).token)).json as { data: Array<{ id: number }> };
      assert.equal((await api('PATCH', `/admin/api/products/${product.data[0].id}`, ADMIN_TOKEN, { name: 'Changed from the browser test' })).status, 200);
      await receiver.waitFor(() => receiver.accepted.size === 1, 15_000, 'the delivery');
      assert.equal(verify(secret, receiver.received[0]).type, 'product.updated');

      const delivered = page.getByRole('row').filter({ hasText: 'product.updated' }).filter({ hasText: 'delivered' });
      for (let i = 0; !(await delivered.count()); i++) {
        assert.ok(i < 100, 'the delivery shows as delivered');
        await new Promise((r) => setTimeout(r, 100));
        await page.reload();
      }
      assert.match(await delivered.innerText(), /200/);
      await delivered.getByRole('button', { name: /^Replay/ }).click();
      await page.getByRole('status').filter({ hasText: '1 delivery queued again' }).waitFor();
      await receiver.waitFor(() => receiver.received.length === 2, 15_000, 'the replay');
      assert.equal(receiver.received[1].id, receiver.received[0].id);
      assert.deepEqual(await unnamedControls(page), []);
    });

    it('browses data: opens Data, picks Orders, filters by status, opens one order with its items', async () => {
      const [order] = await database.store.db.selectFrom('orders').select(['id', 'status']).orderBy('id').limit(1).execute();
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Data' }).click();
      await page.getByRole('heading', { level: 1, name: 'Data' }).waitFor();
      await page.getByRole('link', { name: 'Orders', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
      await page.getByRole('textbox', { name: 'status' }).fill(order.status);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL((url) => url.searchParams.get('status') === order.status);
      const rows = page.getByRole('table', { name: /Orders/ }).getByRole('row');
      assert.ok((await rows.count()) >= 2, 'a header row and the order');
      for (const text of await rows.allInnerTexts()) if (!/^id\s/i.test(text)) assert.match(text, new RegExp(`\\b${order.status}\\b`));
      assert.deepEqual(await unnamedControls(page), []);
      await page.getByRole('link', { name: `Order ${order.id}`, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: `Order ${order.id}` }).waitFor();
      const items = page.getByRole('table', { name: `Order ${order.id}: items` });
      assert.ok((await items.getByRole('row').count()) >= 2, 'the order\'s items as a table');
      assert.deepEqual(await unnamedControls(page), []);
    });

    async function newReader(): Promise<[string, string]> {
      const res = await fetch(`${base}/admin/api/credentials`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'reader', scopes: ['products:read'] }) });
      const issued = (await res.json()) as { clientId: string; clientSecret: string };
      return [issued.clientId, issued.clientSecret];
    }

    it('fits a phone: no page scrolls sideways at 375 px', async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      try {
        for (const path of ['/admin/credentials', '/admin/credentials/new', '/admin/webhooks', '/admin/webhooks/1', '/admin/usage', '/admin/sync', '/admin/data', '/admin/data/orders', '/admin/data/orders/1']) {
          await page.goto(`${base}${path}`);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(overflow <= 0, `${path} is ${overflow} px too wide`);
        }
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

    it('deletes after the confirmation dialog, and signs out', async () => {
      await page.goto(`${base}/admin/credentials`);
      await page.getByRole('link', { name: 'ERP' }).click();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Delete credential' }).click();
      await page.getByRole('status').filter({ hasText: 'Credential deleted' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'ERP' }).count(), 0);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in with the admin token' }).waitFor();
      assert.deepEqual(await context.cookies(`${base}/admin/credentials`), []);
      await page.goto(`${base}/admin/credentials`);
      assert.equal(new URL(page.url()).pathname, '/admin/sign-in');
    });
  });
}
