import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { BACKGROUND_STARTERS, startBackground, stopBackground } from '../../src/background/starters.ts';
import type { BackgroundStarter } from '../../src/background/task.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

/** A port free a moment ago, so that the test can look whether a failed start let go of it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

for (const dialect of await dialects()) {
  describe(`background tasks (${dialect})`, () => {
    const apps: TestApp[] = [];
    const databases: TestDatabase[] = [];
    after(async () => {
      await Promise.all(apps.map((a) => a.close()));
      await Promise.all(databases.map((d) => d.drop()));
    });

    it('start in the order listed, stop in the reverse order, and one that fails to stop does not keep the others running', async () => {
      const t = await createTestApp(dialect);
      apps.push(t);
      const seen: string[] = [];
      const task = (name: string, failStop = false): BackgroundStarter => async () => {
        seen.push(`start ${name}`);
        return { name, stop: async () => { seen.push(`stop ${name}`); if (failStop) throw new Error(`${name} would not stop`); } };
      };
      const tasks = await startBackground(t.ctx, [task('a'), async () => undefined, task('b', true), task('c')]);
      assert.deepEqual(tasks.map((x) => x.name), ['a', 'b', 'c']);
      await stopBackground(t.ctx, tasks);
      assert.deepEqual(seen, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
    });

    it('a task that cannot start stops those started before it, and the error goes on', async () => {
      const t = await createTestApp(dialect);
      apps.push(t);
      const seen: string[] = [];
      const started: BackgroundStarter = async () => {
        seen.push('start a');
        return { name: 'a', stop: async () => void seen.push('stop a') };
      };
      const broken: BackgroundStarter = async () => {
        throw new Error('cannot start b');
      };
      const never: BackgroundStarter = async () => {
        seen.push('start c');
        return undefined;
      };
      await assert.rejects(startBackground(t.ctx, [started, broken, never]), /cannot start b/);
      assert.deepEqual(seen, ['start a', 'stop a']);
    });

    it('the server lists the pruners, the webhook dispatcher, the sync follower, the snapshot runner and the console housekeeping', () => {
      assert.deepEqual(BACKGROUND_STARTERS.map((s) => s.name), ['startEventPruner', 'startWebhookDispatcher', 'startSyncFollower', 'startSnapshotRunner', 'startConsoleHousekeeping', 'startTokenPruner']);
    });

    it('a server whose background work cannot start does not stay half up: it stops listening and closes its database', async () => {
      const database = await createTestDatabase(dialect);
      databases.push(database);
      const store = database.open();
      const port = await freePort();
      // SYNC_FROM without a credential of the main store: the sync follower refuses to start (after the pruner and dispatcher did).
      const config = loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'silent', SYNC_FROM: 'http://127.0.0.1:9' }, {});
      await assert.rejects(startServer(config, { logger: false, store }), (err: unknown) => err instanceof ConfigError && /SYNC_CLIENT_ID/.test(err.message));
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'nothing listens on the port any more');
      await assert.rejects(store.db.selectFrom('events').select('seq').execute(), 'the store it was given is closed');
    });
  });
}
