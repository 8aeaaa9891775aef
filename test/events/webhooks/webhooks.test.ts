import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { pruneOnce } from '../../../src/events/pruner.ts';
import { WebhookDispatcher } from '../../../src/events/webhooks/dispatcher.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { startReceiver, verify, type Receiver } from './receiver.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.3,0.3,0.5', WEBHOOK_POLL_MS: '100' };

for (const dialect of await dialects()) {
  describe(`webhook delivery (${dialect})`, () => {
    let t: TestApp;
    let dispatcher: WebhookDispatcher;
    let receiver: Receiver;

    before(async () => {
      t = await createTestApp(dialect, { env: ENV, seed: { products: 3, orders: 2, seed: 3 } });
      dispatcher = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config: t.config }, { graceMs: 200 });
      dispatcher.start();
    });
    after(async () => {
      await dispatcher.stop();
      await t.close();
    });
    afterEach(async () => {
      // Each test's subscription is removed so that it does not receive the next test's events.
      for (const w of (await t.admin('GET', '/admin/api/webhooks')).json().data as Array<{ id: number }>) await t.admin('DELETE', `/admin/api/webhooks/${w.id}`);
      await receiver?.stop().catch(() => {});
    });

    async function subscribe(events: string[], url = receiver.url): Promise<{ id: number; secret: string }> {
      const res = await t.admin('POST', '/admin/api/webhooks', { url, events });
      assert.equal(res.statusCode, 201, res.body);
      assert.match(res.json().secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      return res.json();
    }
    const brand = (name: string) => t.admin('POST', '/admin/api/brands', { name });
    /** Deliveries once every one has reached `status` (the receiver answers before the outcome is committed). */
    async function settled(id: number, count: number, status = 'delivered') {
      for (let i = 0; i < 200; i++) {
        const list = await deliveries(id);
        if (list.length === count && list.every((d) => d.status === status)) return list;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`deliveries of ${id} did not all become ${status}: ${JSON.stringify(await deliveries(id))}`);
    }
    const deliveries = async (id: number, query = '') => (await t.admin('GET', `/admin/api/webhooks/${id}/deliveries${query}`)).json().data as Array<{ id: number; messageId: string; status: string; attempts: number; lastError: string | null; eventType: string }>;

    it('delivers matching events, signed so the Standard Webhooks library verifies them', async () => {
      receiver = await startReceiver();
      const sub = await subscribe(['brand.*', 'order.status_changed']);
      const created = (await brand('Signed brand')).json();
      await t.admin('POST', '/admin/api/products', { articleNumber: 'WH-1', name: 'Not subscribed', price: '1.00', currency: 'CZK', vatRate: 21 });
      const order = (await t.get('/api/v2/orders?limit=1', (await t.credential(['orders:read'])).token)).json().data[0];
      await t.admin('PATCH', `/admin/api/orders/${order.id}`, { status: order.status === 'cancelled' ? 'returned' : 'cancelled' });
      await t.admin('DELETE', `/admin/api/brands/${created.id}`);
      await receiver.waitFor(() => receiver.accepted.size === 3, 10_000, 'three deliveries');

      const bodies = receiver.received.map((m) => verify(sub.secret, m));
      assert.deepEqual(bodies.map((b) => b.type).sort(), ['brand.created', 'brand.deleted', 'order.status_changed']);
      const createdBody = bodies.find((b) => b.type === 'brand.created')!;
      assert.deepEqual(Object.keys(createdBody).sort(), ['data', 'timestamp', 'type']);
      assert.equal(createdBody.data.id, created.id);
      assert.equal(createdBody.data.name, 'Signed brand');
      assert.match(createdBody.timestamp, /^\d{4}-\d\d-\d\dT.*Z$/);
      assert.deepEqual(bodies.find((b) => b.type === 'brand.deleted')!.data, { id: created.id });
      assert.equal(bodies.find((b) => b.type === 'order.status_changed')!.data.previousStatus, order.status);
      const m = receiver.received[0];
      assert.match(m.id, /^msg_[a-z0-9]+$/);
      assert.match(m.signature, /^v1,[A-Za-z0-9+/]+=*$/);
      assert.ok(Math.abs(Number(m.timestamp) - Date.now() / 1000) < 30);
      assert.equal(m.headers['content-type'], 'application/json');
      assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(m.body, { 'webhook-id': m.id, 'webhook-timestamp': m.timestamp, 'webhook-signature': m.signature }));
      const list = await settled(sub.id, 3);
      assert.ok(list.every((d) => d.attempts === 1));
    });

    it('retries failed attempts with the same webhook-id until a 2xx, also while the receiver is gone, and logs every attempt', async () => {
      receiver = await startReceiver();
      // Each message fails twice (500, then a timeout-free 503) before it is taken.
      receiver.respond = (_m, n) => (n === 0 ? 500 : n === 1 ? 503 : 200);
      const sub = await subscribe(['brand.created']);
      for (let i = 0; i < 5; i++) await brand(`Retry brand ${i}`);
      await receiver.waitFor(() => receiver.received.length >= 5, 5000, 'first attempts');
      // The receiver goes away for a while: attempts fail with a refused connection, and are retried.
      await receiver.stop();
      await new Promise((r) => setTimeout(r, 350));
      await receiver.start();
      await receiver.waitFor(() => receiver.accepted.size === 5, 15_000, 'all five accepted');

      const byId = new Map<string, number>();
      for (const m of receiver.received) {
        verify(sub.secret, m);
        byId.set(m.id, (byId.get(m.id) ?? 0) + 1);
      }
      assert.equal(byId.size, 5, 'one webhook-id per event, kept across attempts');
      for (const [id, count] of byId) {
        assert.ok(count >= 3, `${id} was tried ${count} times`);
        assert.equal(receiver.accepted.get(id)!.length, 1);
      }
      const list = await settled(sub.id, 5);
      const one = (await t.admin('GET', `/admin/api/webhooks/${sub.id}/deliveries/${list[0].messageId}`)).json();
      assert.ok(one.attemptLog.length >= 3);
      assert.equal(one.attemptLog[0].statusCode, 500);
      assert.equal(one.attemptLog[0].error, 'HTTP 500');
      assert.equal(one.attemptLog.at(-1).statusCode, 200);
      assert.deepEqual(one.attemptLog.map((a: { attempt: number }) => a.attempt), one.attemptLog.map((_: unknown, i: number) => i + 1));
    });

    it('disables a subscription at once on 410 Gone', async () => {
      receiver = await startReceiver();
      receiver.respond = () => 410;
      const sub = await subscribe(['brand.*']);
      await brand('Gone brand 1');
      await receiver.waitFor(() => receiver.received.length === 1, 5000, 'the 410');
      await t.admin('GET', `/admin/api/webhooks/${sub.id}`);
      let w = (await t.admin('GET', `/admin/api/webhooks/${sub.id}`)).json();
      for (let i = 0; i < 50 && w.enabled; i++) {
        await new Promise((r) => setTimeout(r, 20));
        w = (await t.admin('GET', `/admin/api/webhooks/${sub.id}`)).json();
      }
      assert.equal(w.enabled, false);
      assert.match(w.disabledReason, /410/);
      await brand('Gone brand 2');
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(receiver.received.length, 1, 'nothing more is sent, not even a retry');
      assert.equal((await deliveries(sub.id, '?status=failed')).length, 1);

      // Enabled again, it gets events from then on; what happened meanwhile waits for a replay.
      receiver.respond = () => 200;
      assert.equal((await t.admin('PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: true })).json().enabled, true);
      await brand('Gone brand 3');
      await receiver.waitFor(() => receiver.accepted.size === 1, 5000, 'the event after enabling');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.length, 2);
      assert.equal(verify(sub.secret, receiver.received[1]).data.name, 'Gone brand 3');
    });

    it('disables a subscription that fails for the whole schedule, keeps why, and replays after it is enabled', async () => {
      receiver = await startReceiver();
      receiver.respond = () => 500;
      const sub = await subscribe(['brand.created']);
      const before = new Date().toISOString();
      await brand('Doomed brand');
      // Schedule 0.2, 0.2, 0.2, 0.3, 0.3, 0.5 s: seven attempts in under two seconds, then the subscription is disabled.
      await receiver.waitFor(() => receiver.received.length === 7, 8000, 'seven attempts');
      let w = (await t.admin('GET', `/admin/api/webhooks/${sub.id}`)).json();
      for (let i = 0; i < 50 && w.enabled; i++) {
        await new Promise((r) => setTimeout(r, 20));
        w = (await t.admin('GET', `/admin/api/webhooks/${sub.id}`)).json();
      }
      assert.equal(w.enabled, false);
      assert.match(w.disabledReason, /failed 7 attempts over the whole retry schedule.*HTTP 500/);
      const [failed] = await deliveries(sub.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.attempts, 7);
      const gaps = receiver.received.slice(1).map((m, i) => m.at - receiver.received[i].at);
      assert.ok(gaps[0] >= 150 && gaps[5] >= 380 && gaps[5] < 1000, `retry gaps follow the schedule with jitter: ${gaps.join(', ')}`);

      // Replaying queues it, but a disabled subscription keeps it until it is enabled.
      receiver.respond = () => 200;
      assert.deepEqual((await t.admin('POST', `/admin/api/webhooks/${sub.id}/replay`)).json(), { queued: 1 });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.accepted.size, 0);
      const enabled = await t.admin('PATCH', `/admin/api/webhooks/${sub.id}`, { enabled: true });
      assert.equal(enabled.json().disabledReason, null);
      await receiver.waitFor(() => receiver.accepted.size === 1, 5000, 'the replay');
      await settled(sub.id, 1);
      assert.equal(receiver.accepted.keys().next().value, receiver.received[0].id, 'a replay keeps the webhook-id');
      verify(sub.secret, receiver.received.at(-1)!);

      // Replay of one delivery, by message id, and of everything since a time.
      assert.deepEqual((await t.admin('POST', `/admin/api/webhooks/${sub.id}/replay`, { delivery: failed.messageId })).json(), { queued: 1 });
      await receiver.waitFor(() => receiver.accepted.get(failed.messageId)?.length === 2, 5000, 'the second replay');
      await settled(sub.id, 1);
      assert.deepEqual((await t.admin('POST', `/admin/api/webhooks/${sub.id}/replay`, { since: before })).json(), { queued: 1 });
      await receiver.waitFor(() => receiver.accepted.get(failed.messageId)?.length === 3, 5000, 'the replay since');
      assert.equal((await t.admin('POST', `/admin/api/webhooks/${sub.id}/replay`, { delivery: 'msg_nope' })).statusCode, 404);
    });

    it('signs with both secrets during a rotation, and only the new one after', async () => {
      receiver = await startReceiver();
      const sub = await subscribe(['brand.created']);
      const rotated = await t.admin('POST', `/admin/api/webhooks/${sub.id}/rotate-secret`);
      assert.equal(rotated.statusCode, 200, rotated.body);
      const secret = rotated.json().secret as string;
      assert.notEqual(secret, sub.secret);
      assert.ok(Date.parse(rotated.json().previousSecretExpiresAt) > Date.now() + 86_000_000);
      await brand('Rotated brand');
      await receiver.waitFor(() => receiver.accepted.size === 1, 5000, 'a delivery');
      const m = receiver.received[0];
      assert.equal(m.signature.split(' ').length, 2);
      assert.ok(m.signature.split(' ').every((s) => s.startsWith('v1,')));
      verify(secret, m);
      verify(sub.secret, m);

      const again = (await t.admin('POST', `/admin/api/webhooks/${sub.id}/rotate-secret`, { overlapSeconds: 0 })).json();
      assert.equal(again.previousSecretExpiresAt, null);
      await brand('Rotated brand 2');
      await receiver.waitFor(() => receiver.accepted.size === 2, 5000, 'a second delivery');
      const last = receiver.received.at(-1)!;
      assert.equal(last.signature.split(' ').length, 1);
      verify(again.secret, last);
      assert.throws(() => verify(secret, last));
    });

    it('keeps the API fast while a receiver hangs', async () => {
      receiver = await startReceiver();
      receiver.respond = () => 'hang';
      await subscribe(['brand.*']);
      for (let i = 0; i < 20; i++) await brand(`Hung brand ${i}`);
      await receiver.waitFor(() => receiver.received.length >= 10, 5000, 'hanging requests');
      const token = (await t.credential(['products:read'])).token;
      const started = Date.now();
      for (let i = 0; i < 20; i++) assert.equal((await t.get('/api/v2/products?limit=100', token)).statusCode, 200);
      assert.ok(Date.now() - started < 2000, `20 reads took ${Date.now() - started} ms`);
    });
  });

  describe(`webhook subscriptions API (${dialect})`, () => {
    let t: TestApp;
    let strict: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      strict = await createTestApp(dialect);
    });
    after(async () => {
      await t.close();
      await strict.close();
    });

    it('creates, lists, gets, changes and deletes subscriptions; the secret is shown only at creation', async () => {
      const created = await t.admin('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/in', events: ['order.*', 'product.updated'], description: 'ERP' });
      assert.equal(created.statusCode, 201);
      const { id, secret } = created.json();
      assert.match(secret, /^whsec_/);
      const got = await t.admin('GET', `/admin/api/webhooks/${id}`);
      assert.equal(got.json().secret, undefined);
      assert.deepEqual(got.json().events, ['order.*', 'product.updated']);
      assert.equal(got.json().enabled, true);
      assert.equal((await t.admin('GET', '/admin/api/webhooks')).json().data.length, 1);
      const patched = await t.admin('PATCH', `/admin/api/webhooks/${id}`, { events: ['*'], enabled: false });
      assert.deepEqual(patched.json().events, ['*']);
      assert.equal(patched.json().enabled, false);
      assert.equal(patched.json().disabledReason, 'disabled by the administrator');
      assert.equal((await t.admin('DELETE', `/admin/api/webhooks/${id}`)).statusCode, 204);
      assert.equal((await t.admin('GET', `/admin/api/webhooks/${id}`)).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/api/webhooks' })).statusCode, 401);
    });

    it('refuses malformed input and patterns that match no event type', async () => {
      for (const [body, field] of [
        [{ url: 'http://127.0.0.1:9/', events: ['ordr.*'] }, 'events'],
        [{ url: 'http://127.0.0.1:9/', events: [] }, 'events'],
        [{ url: 'http://127.0.0.1:9/', events: ['Order.Created'] }, 'events'],
        // A regex matcher backtracked exponentially on these: now refused at once, by count and by matching nothing.
        [{ url: 'http://127.0.0.1:9/', events: [`${'*'.repeat(30)}x`] }, 'events'],
        [{ url: 'http://127.0.0.1:9/', events: [`${'*'.repeat(8)}x`] }, 'events'],
        [{ url: 'http://127.0.0.1:9/', events: ['a'.repeat(101)] }, 'events'],
        [{ url: 'ftp://127.0.0.1/', events: ['*'] }, 'url'],
        [{ url: 'not a url', events: ['*'] }, 'url'],
        [{ url: 'http://user:pw@127.0.0.1/', events: ['*'] }, 'url'],
        [{ events: ['*'] }, 'url'],
      ] as const) {
        const res = await t.admin('POST', '/admin/api/webhooks', body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.ok(res.json().errors.some((e: { name: string }) => e.name.startsWith(field)), `${JSON.stringify(body)}: ${res.body}`);
      }
    });

    it('refuses targets on loopback, private, link-local and metadata addresses unless allowed (SSRF)', async () => {
      for (const url of [
        'http://127.0.0.1:8080/', 'http://localhost/', 'http://10.1.2.3/', 'http://172.20.0.1/', 'http://192.168.1.1/', 'http://169.254.169.254/latest/meta-data/',
        'http://100.64.0.1/', 'http://0.0.0.0/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[fd00::1]/', 'http://[fe80::1]/',
        // Other spellings of the same addresses, and IPv6 ranges that carry an IPv4 address inside.
        'http://[::127.0.0.1]/', 'http://[64:ff9b:1::a00:1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
        'http://0x7f.1/', 'http://2130706433/', 'http://017700000001/', 'http://127.1/', 'http://[fec0::1]/', 'http://[ff02::1]/', 'http://224.0.0.1/', 'http://192.0.2.1/',
      ]) {
        const res = await strict.admin('POST', '/admin/api/webhooks', { url, events: ['*'] });
        assert.equal(res.statusCode, 400, url);
        assert.match(res.json().errors[0].reason, /is in [0-9a-f:.]+\/\d+ \(.+\), not a public address \(set WEBHOOK_ALLOW_PRIVATE=true to allow\)/, url);
      }
      // A public address is accepted (and removed at once: nothing here may send traffic off this machine).
      const ok = await strict.admin('POST', '/admin/api/webhooks', { url: 'http://93.184.215.14/hook', events: ['*'] });
      assert.equal(ok.statusCode, 201);
      assert.equal((await strict.admin('DELETE', `/admin/api/webhooks/${ok.json().id}`)).statusCode, 204);
    });

    it('gives attempts in flight back when it stops, so that the next start sends them with the same webhook-id', async () => {
      const receiver = await startReceiver();
      receiver.respond = () => 'hang';
      const { id } = (await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.created'] })).json();
      const config = { webhooks: { ...t.config.webhooks, pollMs: 50 } };
      try {
        const first = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config }, { graceMs: 100 });
        first.start();
        await t.admin('POST', '/admin/api/brands', { name: 'Stopped brand' });
        await receiver.waitFor(() => receiver.received.length === 1, 5000, 'the hanging attempt');
        await first.stop();
        const [row] = await t.ctx.store.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', id).execute();
        assert.equal(row.status, 'pending');
        assert.equal(row.attempts, 0, 'an abandoned attempt does not count');
        assert.equal(row.locked_by, null);

        receiver.respond = () => 200;
        const second = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config }, { graceMs: 100 });
        second.start();
        try {
          await receiver.waitFor(() => receiver.accepted.size === 1, 5000, 'the resent attempt');
        } finally {
          await second.stop();
        }
        assert.equal(receiver.received[1].id, receiver.received[0].id);
      } finally {
        await t.admin('DELETE', `/admin/api/webhooks/${id}`);
        await receiver.stop();
      }
    });

    it('takes only a 2xx within the timeout: a hang and a redirect are failed attempts, retried', async () => {
      const receiver = await startReceiver();
      receiver.respond = (_m, n) => (n === 0 ? 'hang' : n === 1 ? 302 : 204);
      const { id } = (await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.created'] })).json();
      // The 15 s timeout, shortened so that the test does not wait for it.
      const dispatcher = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config: { webhooks: { ...t.config.webhooks, retrySchedule: [0.2, 0.2], pollMs: 50 } } }, { graceMs: 100, timeoutMs: 300 });
      dispatcher.start();
      try {
        await t.admin('POST', '/admin/api/brands', { name: 'Timeout brand' });
        await receiver.waitFor(() => receiver.accepted.size === 1, 5000, 'the third attempt');
        let one: { status: string; attemptLog: Array<{ statusCode: number | null; error: string | null; durationMs: number }> } | undefined;
        for (let i = 0; i < 100 && one?.status !== 'delivered'; i++) {
          await new Promise((r) => setTimeout(r, 20));
          one = (await t.admin('GET', `/admin/api/webhooks/${id}/deliveries/${receiver.received[0].id}`)).json();
        }
        assert.equal(one!.status, 'delivered');
        assert.equal(one!.attemptLog.length, 3);
        assert.equal(one!.attemptLog[0].statusCode, null);
        assert.match(String(one!.attemptLog[0].error), /no answer within 0\.3 s/);
        assert.ok(one!.attemptLog[0].durationMs >= 290);
        assert.deepEqual([one!.attemptLog[1].statusCode, one!.attemptLog[1].error], [302, 'HTTP 302']);
        assert.deepEqual([one!.attemptLog[2].statusCode, one!.attemptLog[2].error], [204, null]);
        assert.equal(new Set(receiver.received.map((m) => m.id)).size, 1);
      } finally {
        await dispatcher.stop();
        await t.admin('DELETE', `/admin/api/webhooks/${id}`);
        await receiver.stop();
      }
    });

    it('prunes finished deliveries and their attempts past the retention, and keeps pending ones', async () => {
      const db = t.ctx.store.db;
      const { id } = (await t.admin('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/prune', events: ['*'] })).json();
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      const row = (seq: number, status: string) => ({ msg_id: `msg_prune${seq}`, webhook_id: id, event_seq: seq, event_type: 'brand.updated', payload: '{}', status, attempts: 1, next_attempt_at: old, created_at: old, updated_at: old });
      await db.insertInto('webhook_deliveries').values([row(1, 'delivered'), row(2, 'failed'), row(3, 'pending')]).execute();
      const delivered = await db.selectFrom('webhook_deliveries').select('id').where('msg_id', '=', 'msg_prune1').executeTakeFirstOrThrow();
      await db.insertInto('webhook_attempts').values({ delivery_id: delivered.id, webhook_id: id, attempt: 1, started_at: old, duration_ms: 3, status_code: 200, error: null, response: null, node: 'n' }).execute();
      await pruneOnce(t.ctx);
      const left = await db.selectFrom('webhook_deliveries').select('msg_id').where('webhook_id', '=', id).execute();
      assert.deepEqual(left.map((r) => r.msg_id), ['msg_prune3']);
      assert.equal((await db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', id).execute()).length, 0);
      await t.admin('DELETE', `/admin/api/webhooks/${id}`);
    });

    it('refuses a private target at delivery time too, and logs why', async () => {
      // Made while allowed, delivered by a node that does not allow private targets.
      const receiver = await startReceiver();
      try {
        const db = strict.ctx.store.db;
        const made = await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.*'] });
        const row = await t.ctx.store.db.selectFrom('webhooks').selectAll().where('id', '=', made.json().id).executeTakeFirstOrThrow();
        const { id: _id, ...copy } = row;
        // A host name, so the refusal comes from the connection's own checked DNS lookup.
        const inserted = await db.insertInto('webhooks').values({ ...copy, url: receiver.url.replace('127.0.0.1', 'localhost'), from_seq: 0 }).returning('id').executeTakeFirstOrThrow();
        // An IPv4-mapped IPv6 literal: net.connect skips the lookup for it, so the sender checks it itself.
        const literal = await db.insertInto('webhooks').values({ ...copy, url: receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]'), from_seq: 0 }).returning('id').executeTakeFirstOrThrow();
        const dispatcher = new WebhookDispatcher({ store: strict.ctx.store, bus: strict.ctx.bus, config: { webhooks: { ...strict.config.webhooks, retrySchedule: [60], pollMs: 50 } } }, { graceMs: 100 });
        dispatcher.start();
        try {
          await strict.admin('POST', '/admin/api/brands', { name: 'SSRF brand' });
          let list: Array<{ attempts: number; lastError: string | null; status: string }> = [];
          for (let i = 0; i < 100 && !list[0]?.attempts; i++) {
            await new Promise((r) => setTimeout(r, 30));
            list = (await strict.admin('GET', `/admin/api/webhooks/${inserted.id}/deliveries`)).json().data;
          }
          assert.equal(list[0].status, 'pending');
          assert.match(String(list[0].lastError), /localhost resolves to .*: .* is in .*\(loopback\), not a public address/);
          let viaLiteral: Array<{ attempts: number; lastError: string | null }> = [];
          for (let i = 0; i < 100 && !viaLiteral[0]?.attempts; i++) {
            viaLiteral = (await strict.admin('GET', `/admin/api/webhooks/${literal.id}/deliveries`)).json().data;
            if (!viaLiteral[0]?.attempts) await new Promise((r) => setTimeout(r, 30));
          }
          assert.match(String(viaLiteral[0].lastError), /^::ffff:7f00:1 is in 127\.0\.0\.0\/8 \(loopback\), not a public address/);
          assert.equal(receiver.received.length, 0);
        } finally {
          await dispatcher.stop();
        }
      } finally {
        await receiver.stop();
      }
    });
  });
}
