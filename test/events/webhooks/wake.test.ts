import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { buildApp } from '../../../src/app.ts';
import { createContext } from '../../../src/context.ts';
import { WebhookDispatcher } from '../../../src/events/webhooks/dispatcher.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { startReceiver, type Receiver } from './receiver.ts';

// A poll interval far longer than the test: a delivery that arrives within seconds was woken by the commit.
const POLL_MS = 120_000;
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: String(POLL_MS) };
const WOKEN_WITHIN_MS = 3000;

for (const dialect of await dialects()) {
  describe(`webhook dispatcher wake-up (${dialect})`, () => {
    let t: TestApp;
    let dispatcher: WebhookDispatcher;
    let receiver: Receiver;

    before(async () => {
      t = await createTestApp(dialect, { env: ENV, seed: { products: 2, orders: 0, seed: 5 } });
      receiver = await startReceiver();
      dispatcher = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config: t.config }, { graceMs: 200 });
      dispatcher.start();
    });
    after(async () => {
      await dispatcher.stop();
      await receiver.stop();
      await t.close();
    });
    afterEach(async () => {
      for (const w of (await t.admin('GET', '/admin/api/webhooks')).json().data as Array<{ id: number }>) await t.admin('DELETE', `/admin/api/webhooks/${w.id}`);
    });

    /** Subscribes, then lets the dispatcher settle into its wait (its next poll is POLL_MS away). */
    async function subscribed(): Promise<void> {
      assert.equal((await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.*'] })).statusCode, 201);
      await new Promise((r) => setTimeout(r, 300));
    }

    /** Ms from a write's answer to its delivery. */
    async function deliveredAfter(write: () => Promise<{ statusCode: number; body: string }>): Promise<number> {
      const before = receiver.received.length;
      const res = await write();
      assert.equal(res.statusCode, 201, res.body);
      const answered = Date.now();
      await receiver.waitFor(() => receiver.received.length > before, WOKEN_WITHIN_MS, 'the delivery woken by the commit');
      return receiver.received[receiver.received.length - 1].at - answered;
    }

    it('delivers a commit of this node at once, not at the next poll', async () => {
      await subscribed();
      for (let i = 0; i < 3; i++) {
        const ms = await deliveredAfter(() => t.admin('POST', '/admin/api/brands', { name: `Woken ${i}` }));
        assert.ok(ms < WOKEN_WITHIN_MS, `delivered ${ms} ms after the commit; the poll is ${POLL_MS} ms`);
        // Idle again between writes: each delivery is a wake-up of its own.
        await new Promise((r) => setTimeout(r, 200));
      }
    });

    it('delivers a commit of another node at once (PostgreSQL: LISTEN), not at the next poll', { skip: dialect !== 'postgres' && 'SQLite: one process serves the store' }, async () => {
      await subscribed();
      // A second node on the same database: its own context, so its own in-process bus, which this
      // dispatcher does not hear; only PostgreSQL's NOTIFY reaches it.
      const other = await buildApp(await createContext(t.config, t.ctx.store), { logger: false });
      try {
        const ms = await deliveredAfter(() => other.inject({ method: 'POST', url: '/admin/api/brands', payload: { name: 'From the other node' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
        assert.ok(ms < WOKEN_WITHIN_MS, `delivered ${ms} ms after the other node's commit; the poll is ${POLL_MS} ms`);
      } finally {
        await other.close();
      }
    });
  });
}
