import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { recordEvents } from '../../src/events/log.ts';
import { inTransaction } from '../../src/events/transaction.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));
const run = promisify(execFile);

for (const dialect of await dialects()) {
  describe(`store-api webhooks (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
    });
    after(() => db.drop());

    const cli = async (args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> => {
      try {
        const { stdout, stderr } = await run(process.execPath, [BIN, '--database', db.url, 'webhooks', ...args], {
          cwd: tmpdir(), env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...extra }, timeout: 60_000,
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };

    it('adds, lists, rotates, shows deliveries, replays and removes; refuses a private target in one line', async () => {
      const refused = await cli(['add', '--url', 'http://127.0.0.1:9/in', '--events', 'order.*']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^store-api: url 127\.0\.0\.1 is in 127\.0\.0\.0\/8 \(loopback\), not a public address.*WEBHOOK_ALLOW_PRIVATE=true/);
      assert.equal(refused.stderr.trim().split('\n').length, 1);

      const added = await cli(['add', '--url', 'http://127.0.0.1:9/in', '--events', 'order.*, product.updated', '--json'], { WEBHOOK_ALLOW_PRIVATE: 'true' });
      assert.equal(added.code, 0, added.stderr);
      const w = JSON.parse(added.stdout);
      assert.deepEqual(Object.keys(w), ['id', 'url', 'events', 'secret']);
      assert.deepEqual(w.events, ['order.*', 'product.updated']);
      assert.match(w.secret, /^whsec_/);

      // An order event after the subscription: the fan-out of a running server would queue it; here the
      // delivery row is made by replaying everything since a time, which the CLI offers.
      await inTransaction(db.store, undefined, (wc) => recordEvents(wc, [{ type: 'order.created', resource: 'order', resourceId: 1, data: { id: 1 } }]));
      const replayed = JSON.parse((await cli(['replay', String(w.id), '--since', '2000-01-01T00:00:00Z', '--json'])).stdout);
      assert.deepEqual(replayed, { queued: 1 });
      const [shown, rotation, listed] = await Promise.all([cli(['deliveries', String(w.id), '--json']), cli(['rotate-secret', String(w.id), '--json']), cli(['list', '--json'])]);
      const deliveries = JSON.parse(shown.stdout);
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0].eventType, 'order.created');
      assert.equal(deliveries[0].status, 'pending');
      assert.match(deliveries[0].messageId, /^msg_/);

      const rotated = JSON.parse(rotation.stdout);
      assert.notEqual(rotated.secret, w.secret);
      assert.ok(rotated.previousSecretExpiresAt);
      const list = JSON.parse(listed.stdout);
      assert.equal(list.length, 1);
      assert.equal(list[0].secret, undefined);
      assert.equal((await cli(['remove', String(w.id)])).code, 0);
      const gone = await cli(['remove', String(w.id)]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /^store-api: Webhook \d+ was not found/);
    });
  });
}
