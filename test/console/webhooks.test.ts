// The console's webhook pages over HTTP, with the real dispatcher delivering to a real receiver on loopback:
// subscribe from the catalogue, the secret once, the delivery log with the receiver's answer, replay, disable.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebhookDispatcher } from '../../src/events/webhooks/dispatcher.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { startReceiver, verify, type Receiver } from '../events/webhooks/receiver.ts';
import { anotherNode, signIn, type Browserish } from './console-client.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2', WEBHOOK_POLL_MS: '100' };

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const dialect of await dialects()) {
  describe(`console webhooks (${dialect})`, () => {
    let t: TestApp;
    let admin: Browserish;
    let dispatcher: WebhookDispatcher;
    let receiver: Receiver;

    before(async () => {
      t = await createTestApp(dialect, { env: ENV, seed: { products: 2, orders: 1, seed: 5 } });
      dispatcher = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config: t.config }, { graceMs: 200 });
      dispatcher.start();
      receiver = await startReceiver();
      admin = await signIn(t.app);
    });
    after(async () => {
      await dispatcher.stop();
      await receiver.stop();
      await t.close();
    });

    it('refuses a private receiver unless the operator allows it, and patterns that match no event, with the reasons on the form', async () => {
      const strict = await anotherNode(t);
      try {
        const client = await signIn(strict.app);
        const res = await client.post('/admin/webhooks', { url: receiver.url, events: 'product.*' });
        assert.equal(res.statusCode, 400);
        assert.match(res.body, /role="alert"/);
        assert.match(res.body, /<strong>url<\/strong>/);
      } finally {
        await strict.app.close();
      }
      const typo = await admin.post('/admin/webhooks', { url: receiver.url, patterns: 'prodcut.*' });
      assert.equal(typo.statusCode, 400);
      assert.match(typo.body, /match no event type: prodcut\.\*/);
      assert.match(typo.body, /value="prodcut\.\*"/, 'what was typed is kept');
      assert.equal((await t.admin('GET', '/admin/api/webhooks')).json().data.length, 0);
    });

    it('subscribes from the catalogue with wildcards, shows the secret once, logs each delivery with the answer, and replays one or all failed', async () => {
      const form = await admin.get('/admin/webhooks/new');
      assert.match(form.body, /<input type="checkbox" name="events" value="product\.\*" id="event-product-all">/);
      assert.match(form.body, /value="order\.status_changed"/);

      const created = await admin.post('/admin/webhooks', { url: receiver.url, description: 'ERP', events: ['product.*', 'order.status_changed'], patterns: '*.deleted' });
      assert.equal(created.statusCode, 201, created.body);
      const secret = /id="signing-secret" class="mono" readonly value="(whsec_[A-Za-z0-9+/=]+)"/.exec(created.body)![1];
      const id = Number(/href="\/admin\/webhooks\/(\d+)"/.exec(created.body)![1]);
      assert.deepEqual((await t.admin('GET', `/admin/api/webhooks/${id}`)).json().events, ['product.*', 'order.status_changed', '*.deleted']);
      const detail = await admin.get(`/admin/webhooks/${id}`);
      assert.doesNotMatch(detail.body, new RegExp(secret.replace(/[+/=]/g, '\\$&')), 'the secret is not shown again');
      assert.match(detail.body, /id="patterns" name="patterns" value="\*\.deleted"/);

      receiver.respond = () => 200;
      const product = (await t.get('/api/v2/products?limit=1', (await t.credential(['products:read'])).token)).json().data[0];
      assert.equal((await t.admin('PATCH', `/admin/api/products/${product.id}`, { name: 'Changed in a test' })).statusCode, 200);
      await receiver.waitFor(() => receiver.accepted.size === 1, 10_000, 'the delivery');
      assert.equal(verify(secret, receiver.received[0]).type, 'product.updated');

      const log = await until('the delivery in the log', async () => {
        const page = await admin.get(`/admin/webhooks/${id}`);
        return /<span class="badge ok">delivered<\/span>/.test(page.body) ? page.body : undefined;
      });
      assert.match(log, /<code>product\.updated<\/code>/);
      assert.match(log, /data-label="Attempts" class="num">1</);
      assert.match(log, /data-label="Last status" class="num">200</);
      assert.match(log, /<span class="excerpt">ok<\/span>/);
      const deliveryId = Number(/\/admin\/webhooks\/\d+\/deliveries\/(\d+)\/replay/.exec(log)![1]);

      const replayed = await admin.post(`/admin/webhooks/${id}/deliveries/${deliveryId}/replay`, {});
      assert.equal(replayed.statusCode, 303);
      assert.equal(replayed.headers.location, `/admin/webhooks/${id}?notice=replayed&queued=1`);
      await receiver.waitFor(() => receiver.received.length === 2, 10_000, 'the replay');
      assert.equal(receiver.received[1].id, receiver.received[0].id, 'a replay keeps its webhook-id');

      // A receiver that fails until the schedule is used up: the log says so, and "replay all failed" sends it again once enabled.
      receiver.respond = () => 503;
      await t.admin('PATCH', `/admin/api/products/${product.id}`, { name: 'Failing delivery' });
      const failed = await until('a failed delivery', async () => {
        const page = await admin.get(`/admin/webhooks/${id}?status=failed`);
        return /<span class="badge bad">failed<\/span>/.test(page.body) ? page.body : undefined;
      });
      assert.match(failed, /data-label="Last status" class="num">503</);
      assert.match(failed, /<span class="excerpt">nope<\/span>/);
      assert.match(failed, /Replay all failed \(1\)/);
      const attempts = await admin.get(`/admin/webhooks/${id}/deliveries/${/\/deliveries\/(\d+)\/replay/.exec(failed)![1]}`);
      assert.equal(attempts.statusCode, 200);
      assert.equal((attempts.body.match(/<pre class="answer">nope<\/pre>/g) ?? []).length, 3, 'each attempt with its answer');

      // A delivery that used up the schedule disables its subscription; the page says why.
      const why = await admin.get(`/admin/webhooks/${id}`);
      assert.match(why.body, /Why it is disabled/);
      assert.match(why.body, /failed 3 attempts over the whole retry schedule/);

      receiver.respond = () => 200;
      assert.equal((await admin.post(`/admin/webhooks/${id}/enable`, {})).statusCode, 303);
      const all = await admin.post(`/admin/webhooks/${id}/replay-failed`, {});
      assert.equal(all.headers.location, `/admin/webhooks/${id}?notice=replayed&queued=1`);
      await receiver.waitFor(() => receiver.accepted.size === 2, 10_000, 'the failed delivery, replayed');
      assert.match((await admin.get(all.headers.location as string)).body, /1 delivery queued again/);
    });

    it('disables with a visible reason, enables, rotates after confirmation, and deletes after confirmation', async () => {
      const created = await admin.post('/admin/webhooks', { url: receiver.url, events: 'brand.*' });
      const id = Number(/href="\/admin\/webhooks\/(\d+)"/.exec(created.body)![1]);
      const first = /value="(whsec_[^"]+)"/.exec(created.body)![1];

      assert.equal((await admin.post(`/admin/webhooks/${id}/disable`, {})).statusCode, 303);
      const disabled = await admin.get(`/admin/webhooks/${id}`);
      assert.match(disabled.body, /Why it is disabled/);
      assert.match(disabled.body, /disabled by the administrator/);
      assert.match((await admin.get('/admin/webhooks')).body, /<span class="badge off">Disabled<\/span><div class="muted">disabled by the administrator<\/div>/);
      assert.equal((await admin.post(`/admin/webhooks/${id}/enable`, {})).statusCode, 303);
      assert.equal((await t.admin('GET', `/admin/api/webhooks/${id}`)).json().enabled, true);

      const ask = await admin.post(`/admin/webhooks/${id}/rotate`, {});
      assert.equal(ask.statusCode, 200);
      assert.doesNotMatch(ask.body, /whsec_/);
      const rotated = await admin.post(`/admin/webhooks/${id}/rotate`, { confirmed: 'yes' });
      const second = /value="(whsec_[^"]+)"/.exec(rotated.body)![1];
      assert.notEqual(second, first);
      assert.match(rotated.body, /signed with the previous secret too/);

      assert.equal((await admin.post(`/admin/webhooks/${id}/delete`, {})).statusCode, 200);
      assert.equal((await t.admin('GET', `/admin/api/webhooks/${id}`)).statusCode, 200, 'not deleted before confirmation');
      const deleted = await admin.post(`/admin/webhooks/${id}/delete`, { confirmed: 'yes' });
      assert.equal(deleted.headers.location, '/admin/webhooks?notice=deleted');
      assert.equal((await t.admin('GET', `/admin/api/webhooks/${id}`)).statusCode, 404);
    });
  });
}
