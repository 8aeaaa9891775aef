import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { REQUIRED_SCOPES } from '../../src/sync/mirrors.ts';
import { insecureSource, localCatalogue } from '../../src/sync/guard.ts';
import { runSync } from '../../src/sync/follower.ts';
import { readState } from '../../src/sync/state.ts';
import { syncStatus } from '../../src/sync/status.ts';
import { dialects } from '../helpers/databases.ts';
import { assertSameData, startInstance, syncOnce, waitCaughtUp, type Instance } from './cluster.ts';

const run = promisify(execFile);
const at = '2026-01-02T03:04:05.678Z';
const brand = (id: number, extra: Record<string, unknown> = {}) => ({ id, name: `Brand ${id}`, slug: `brand-${id}`, description: null, website: null, createdAt: at, updatedAt: at, ...extra });
const product = (id: number, extra: Record<string, unknown> = {}) => ({
  id, articleNumber: `F-${id}`, name: `Product ${id}`, description: null, status: 'active', brandId: null, categoryId: null, ean: null,
  price: '10.00', currency: 'CZK', vatRate: 21, stock: 1, weight: null, url: null, createdAt: at, updatedAt: at, ...extra,
});
const emptyPage = { data: [], pagination: { limit: 1000, nextCursor: null, hasMore: false } };

/**
 * A main store that is not one: a real HTTP server on loopback that grants a token and answers the routes a
 * follower reads with whatever the test puts in `routes` (a JSON value, or a handler of its own).
 */
interface FakeMain {
  url: string;
  routes: Map<string, unknown | ((req: IncomingMessage, res: ServerResponse) => void)>;
  /** Answers the server began and whose client went away before they were written out. */
  cutOff: number;
  close(): Promise<void>;
}

async function fakeMain(): Promise<FakeMain> {
  const fake: FakeMain = { url: '', routes: new Map(), cutOff: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res.on('close', () => {
      if (!res.writableFinished) fake.cutOff++;
    });
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/oauth/token') return json(200, { access_token: 'fake', token_type: 'Bearer', expires_in: 3600, scope: REQUIRED_SCOPES.join(' ') });
    const route = fake.routes.get(path);
    if (typeof route === 'function') return (route as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
    if (route !== undefined) return json(200, route);
    if (path.startsWith('/api/v2/') && path !== '/api/v2/changes') return json(200, emptyPage);
    json(404, { code: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return fake;
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const fast = { baseMs: 5, capMs: 10 };

for (const dialect of await dialects()) {
  describe(`sync safety: what a follower reads, and what it may replace (${dialect})`, () => {
    let main: Instance;
    let fake: FakeMain;
    before(async () => {
      [main, fake] = await Promise.all([startInstance(dialect, { seed: 20 }), fakeMain()]);
    });
    after(async () => {
      await Promise.all([main?.close(), fake?.close()]);
    });

    const fresh = async (run: (follower: Instance) => Promise<void>, seed?: number) => {
      const follower = await startInstance(dialect, { seed });
      try {
        await run(follower);
      } finally {
        await follower.close();
      }
    };
    const fromFake = (follower: Instance, extra: Partial<Parameters<typeof runSync>[0]> = {}) =>
      runSync({ store: follower.database.store, from: fake.url, clientId: 'x', clientSecret: 'y', follow: false, log: quiet, backoff: fast, ...extra });

    it('refuses an answer of the real main store larger than SYNC_MAX_BODY_BYTES, and reads it under a larger cap', () => fresh(async (follower) => {
      // The cap is set tiny here: the token, the head and the snapshot request fit, the job with its signed URL does not
      // (a snapshot's file itself is streamed, never held, so the cap does not apply to it).
      await assert.rejects(syncOnce(main, follower, { maxBodyBytes: 400 }), /GET \/api\/v2\/snapshots\/\d+: the answer is larger than 400 bytes \(SYNC_MAX_BODY_BYTES\)$/);
      assert.deepEqual(await localCatalogue(follower.database.store.db), {}, 'nothing was applied');
      assert.match(String((await syncStatus(follower.database.store.db)).lastError), /larger than 400 bytes/);
      await syncOnce(main, follower, { maxBodyBytes: 8 * 1024 * 1024 });
      await assertSameData(main, follower);
    }));

    it('stops reading a streamed answer (no Content-Length) once it passes the cap, and drops the connection', () => fresh(async (follower) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      fake.routes.set('/api/v2/changes/head', { seq: 1 });
      fake.routes.set('/api/v2/brands', (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // 64 MB offered in 64 KB chunks, each when the previous one drained: a client that stops reading stops it.
        const more = () => {
          while (written < 1024 && !res.destroyed) {
            written++;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      });
      const cutOffBefore = fake.cutOff;
      try {
        await assert.rejects(fromFake(follower, { maxBodyBytes: 256 * 1024 }), /GET \/api\/v2\/brands: the answer is larger than 262144 bytes/);
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(fake.cutOff, cutOffBefore + 1, 'the follower hung up on the answer');
        assert.ok(written < 1024, `the server was not made to write the whole body (${written} of 1024 chunks)`);
      } finally {
        fake.routes.clear();
      }
    }));

    it('refuses a snapshot page with an item its schema does not allow, applies nothing of it, and says why in sync status', () => fresh(async (follower) => {
      fake.routes.set('/api/v2/changes/head', { seq: 3 });
      fake.routes.set('/api/v2/brands', { data: [brand(1), brand(2, { name: 42 }), brand(3)], pagination: { limit: 1000, nextCursor: null, hasMore: false } });
      try {
        await assert.rejects(fromFake(follower), /the main store sent brands item 2 that this store's schema refuses \(name must be string\); nothing of the batch was applied/);
        assert.deepEqual(await localCatalogue(follower.database.store.db), {});
        const status = await syncStatus(follower.database.store.db);
        assert.equal(status.phase, 'snapshot');
        assert.match(String(status.lastError), /brands item 2 .*name must be string/);
        for (const bad of [{ slug: undefined }, { createdAt: 'yesterday' }, { id: 0 }, { website: ['x'] }]) {
          fake.routes.set('/api/v2/brands', { data: [brand(5, bad)], pagination: { limit: 1000, nextCursor: null, hasMore: false } });
          await assert.rejects(fromFake(follower), /brands item .* that this store's schema refuses/, JSON.stringify(bad));
        }
        fake.routes.set('/api/v2/brands', { data: 'not a list', pagination: {} });
        await assert.rejects(fromFake(follower), /a brands page that this store's schema refuses \(data must be array/);
        assert.deepEqual(await localCatalogue(follower.database.store.db), {});
      } finally {
        fake.routes.clear();
      }
    }));

    it('refuses a batch of the feed with an invalid item, keeping its cursor before it', () => fresh(async (follower) => {
      fake.routes.set('/api/v2/changes/head', { seq: 3 });
      const event = (seq: number, data: Record<string, unknown>) => ({ seq, type: 'product.updated', resource: 'product', resourceId: Number(data.id), occurredAt: at, data });
      fake.routes.set('/api/v2/changes', { data: [event(4, product(1)), event(5, product(2, { price: 'free' }))], pagination: { limit: 500, nextCursor: '5', hasMore: false } });
      try {
        await assert.rejects(fromFake(follower), /products item 2 in event 5 that this store's schema refuses \(price must match /);
        const state = (await readState(follower.database.store.db))!;
        assert.equal(state.cursorSeq, 3, 'the batch was not applied: the cursor stays at the snapshot head');
        assert.match(String(state.lastError), /event 5/);
        assert.deepEqual(await localCatalogue(follower.database.store.db), {}, 'not even the valid event of the batch');
        // A valid batch then goes through.
        fake.routes.set('/api/v2/changes', { data: [event(4, product(1)), event(5, product(2))], pagination: { limit: 500, nextCursor: '5', hasMore: false } });
        const outcome = await fromFake(follower);
        assert.equal(outcome.cursor, 5);
        assert.deepEqual(await localCatalogue(follower.database.store.db), { products: 2 });
      } finally {
        fake.routes.clear();
      }
    }));

    it('refuses a first sync into a store with a catalogue of its own, naming the counts; --force replaces it', () => fresh(async (follower) => {
      const own = await localCatalogue(follower.database.store.db);
      assert.equal(own.products, 7);
      await assert.rejects(syncOnce(main, follower), (err: Error) => {
        assert.match(err.message, /^refusing a first sync from http:\/\/127\.0\.0\.1:\d+: this store already holds .*7 products.* of its own, which the snapshot would replace with the main store's; pass --force \(SYNC_FORCE=true for serve\) to replace them$/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
      assert.deepEqual(await localCatalogue(follower.database.store.db), own, 'nothing was deleted');
      assert.equal(await readState(follower.database.store.db), undefined, 'the store did not become a follower');

      // The command line: refused with the one-line reason, then accepted with --force.
      const cli = async (...args: string[]) => {
        const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: follower.database.url, SYNC_CLIENT_ID: main.follower.clientId, SYNC_CLIENT_SECRET: main.follower.clientSecret, LOG_LEVEL: 'warn' };
        try {
          const { stdout, stderr } = await run(process.execPath, ['bin/store-api.js', 'sync', '--from', main.url, ...args], { env, timeout: 60_000 });
          return { code: 0, stdout, stderr };
        } catch (e) {
          const err = e as { code?: number; stdout?: string; stderr?: string };
          return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
        }
      };
      const refused = await cli('--json');
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr.trim().split('\n').at(-1)!, /^store-api: refusing a first sync from .*7 products.*pass --force/);
      assert.deepEqual(await localCatalogue(follower.database.store.db), own);
      const forced = await cli('--force', '--json');
      assert.equal(forced.code, 0, forced.stderr);
      assert.ok((JSON.parse(forced.stdout) as { snapshot: unknown }).snapshot);
      await assertSameData(main, follower);
      // From then on it is a follower, and a later sync needs no --force.
      await syncOnce(main, follower);
    }, 7));

    it('serve with SYNC_FORCE=true replaces the catalogue of its store and follows', async () => {
      const follower = await startInstance(dialect, { seed: 4, env: { SYNC_FROM: main.url, SYNC_CLIENT_ID: main.follower.clientId, SYNC_CLIENT_SECRET: main.follower.clientSecret, SYNC_FORCE: 'true' } });
      try {
        await waitCaughtUp(main, follower);
        await assertSameData(main, follower);
      } finally {
        await follower.close();
      }
    });

    it('warns when the main store is reached over plain http on another machine', async () => {
      assert.match(String(insecureSource('http://10.0.0.5:3000')), /http:\/\/10\.0\.0\.5:3000 is reached over plain http.*use https/);
      assert.match(String(insecureSource('http://main-store.example.com')), /plain http/);
      for (const ok of ['https://main-store.example.com', 'http://127.0.0.1:3000', 'http://127.1.2.3', 'http://localhost:3000', 'http://[::1]:3000']) assert.equal(insecureSource(ok), undefined, ok);
      const warnings: string[] = [];
      const log = { ...quiet, warn: (_o: object, msg: string) => void warnings.push(msg) };
      // Stopped before it starts: the warning is given up front, and nothing is sent anywhere.
      await fresh(async (follower) => {
        await runSync({ store: follower.database.store, from: 'http://10.1.2.3:3000', clientId: 'x', clientSecret: 'y', follow: true, log, signal: AbortSignal.abort() });
        await runSync({ store: follower.database.store, from: main.url, clientId: 'x', clientSecret: 'y', follow: true, log, signal: AbortSignal.abort() });
      });
      assert.deepEqual(warnings, ['sync: the main store http://10.1.2.3:3000 is reached over plain http: its client secret, tokens and data travel unencrypted; use https']);
    });
  });
}
