import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { recordEvents } from '../../../src/events/log.ts';
import { createWebhook } from '../../../src/events/webhooks/subscriptions.ts';
import { inTransaction } from '../../../src/events/transaction.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { ADMIN_TOKEN } from '../../helpers/app.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../helpers/databases.ts';
import { startReceiver, verify, type Receiver } from './receiver.ts';

const ENV = { ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: Array(20).fill('0.3').join(','), WEBHOOK_POLL_MS: '100', LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000' };

/** `store-api serve` as its own process, as an operator runs it; resolves with its URL once it listens. */
async function serve(databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/store-api.js', 'serve', '--port', '0'], { env: { ...process.env, ...ENV, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  return { child, url };
}

const adminPost = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

for (const dialect of await dialects()) {
  describe(`webhook delivery across a crash (${dialect})`, () => {
    let db: TestDatabase;
    let receiver: Receiver | undefined;
    const children: ChildProcess[] = [];
    after(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await receiver?.stop().catch(() => {});
      await db?.drop();
    });

    it('delivers every event after kill -9 and a restart, with the webhook-ids given before the crash', { timeout: 90_000 }, async () => {
      db = await createTestDatabase(dialect);
      const r = (receiver = await startReceiver());
      await r.stop(); // the receiver is down while the first server runs
      const sub = await createWebhook(db.store.db, { url: r.url, events: ['*'] }, true);

      const first = await serve(db.url);
      children.push(first.child);
      for (let i = 0; i < 30; i++) assert.equal((await adminPost(first.url, '/admin/api/brands', { name: `Crash brand ${i}` })).status, 201);
      // Let some attempts fail against the absent receiver, then kill the server mid-work, without warning.
      for (let i = 0; i < 100; i++) {
        const tried = await db.store.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        if (Number(tried.n) >= 10) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const before = await db.store.db.selectFrom('webhook_deliveries').select(['msg_id', 'event_seq', 'status']).execute();
      assert.ok(before.length > 0 && before.every((d) => d.status === 'pending'));

      // Events committed while no server runs (an import, say) are delivered too.
      await inTransaction(db.store, undefined, (w) => recordEvents(w, [1, 2, 3].map((n) => ({ type: 'brand.updated', resource: 'brand', resourceId: n, data: { id: n } }))));
      const events = await db.store.db.selectFrom('events').select('seq').execute();
      const expected = events.length;
      assert.equal(expected, 33);

      await r.start();
      const second = await serve(db.url);
      children.push(second.child);
      try {
        await r.waitFor(() => r.accepted.size === expected, 60_000, `${expected} deliveries after the restart`);
        const seqs = new Set<number>();
        const idBySeq = new Map(before.map((d) => [Number(d.event_seq), d.msg_id]));
        for (const m of r.received) {
          verify(sub.secret, m);
          const row = await db.store.db.selectFrom('webhook_deliveries').select(['event_seq']).where('msg_id', '=', m.id).executeTakeFirstOrThrow();
          seqs.add(Number(row.event_seq));
          if (idBySeq.has(Number(row.event_seq))) assert.equal(m.id, idBySeq.get(Number(row.event_seq)), 'webhook-id unchanged across the crash');
        }
        assert.equal(seqs.size, expected);
      } finally {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
    });
  });
}

if ((await dialects()).includes('postgres')) {
  describe('two nodes on one PostgreSQL', () => {
    let db: TestDatabase;
    let receiver: Receiver | undefined;
    const nodes: RunningServer[] = [];
    after(async () => {
      for (const n of nodes) await n.stop();
      await receiver?.stop().catch(() => {});
      await db?.drop();
    });

    it('make each attempt once: every webhook-id reaches the receiver exactly once', { timeout: 60_000 }, async (t) => {
      db = await createTestDatabase('postgres');
      const r = (receiver = await startReceiver());
      const sub = await createWebhook(db.store.db, { url: r.url, events: ['brand.*'] }, true);
      for (let i = 0; i < 2; i++) nodes.push(await startServer(loadConfig({ ...ENV, DATABASE_URL: db.url, PORT: '0' }, {}), { logger: false }));
      const writes = 200;
      await Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (let i = worker; i < writes; i += 8) assert.equal((await adminPost(nodes[i % 2].url, '/admin/api/brands', { name: `Two-node brand ${i}` })).status, 201);
        }),
      );
      {
        await r.waitFor(() => r.accepted.size === writes, 30_000, `${writes} deliveries`);
        // Give a duplicate, if any were to come, time to arrive.
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(r.received.length, writes, 'no attempt was made twice');
        for (const m of r.received) verify(sub.secret, m);
        const attempts = await db.store.db.selectFrom('webhook_attempts').select(['delivery_id', 'node']).execute();
        assert.equal(attempts.length, writes);
        assert.equal(new Set(attempts.map((a) => a.delivery_id)).size, writes);
        // Which node wins each claim is up to timing; that both usually do is worth seeing, not a condition of the test.
        t.diagnostic(`attempts by node: ${JSON.stringify(Object.fromEntries([...new Set(attempts.map((a) => a.node))].map((n) => [n, attempts.filter((a) => a.node === n).length])))}`);
      }
    });
  });
}
