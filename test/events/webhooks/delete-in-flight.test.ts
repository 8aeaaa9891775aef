import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { WebhookDispatcher } from '../../../src/events/webhooks/dispatcher.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2', WEBHOOK_POLL_MS: '100' };

/** A receiver that holds every request until told to answer it. */
async function holdingReceiver(): Promise<{ url: string; held: http.ServerResponse[]; close(): Promise<void> }> {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    held,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const until = async (what: string, predicate: () => boolean | Promise<boolean>, ms = 10_000) => {
  for (const end = Date.now() + ms; !(await predicate());) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

for (const dialect of await dialects()) {
  describe(`a webhook deleted while its deliveries are in flight (${dialect})`, () => {
    let t: TestApp;
    const lines: Array<{ level: number; msg: string }> = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(JSON.parse(chunk.toString())); done(); } });

    before(async () => {
      t = await createTestApp(dialect, { env: ENV });
    });
    after(async () => {
      await t.close();
    });

    it('records nothing for the gone subscription and logs no error; later deliveries go on', async () => {
      const receiver = await holdingReceiver();
      const dispatcher = new WebhookDispatcher({ store: t.ctx.store, bus: t.ctx.bus, config: t.config, log: pino({ level: 'debug' }, sink) }, { graceMs: 200 });
      dispatcher.start();
      try {
        const doomed = (await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.*'] })).json() as { id: number };
        for (let i = 0; i < 3; i++) await t.admin('POST', '/admin/api/brands', { name: `In flight ${i}` });
        await until('three attempts in flight', () => receiver.held.length === 3);

        assert.equal((await t.admin('DELETE', `/admin/api/webhooks/${doomed.id}`)).statusCode, 204);
        // Two answered 2xx, one 500: both kinds of outcome are recorded for a subscription that is gone.
        for (const [i, res] of receiver.held.splice(0).entries()) res.writeHead(i === 2 ? 500 : 200).end();

        // The dispatcher is still healthy: a new subscription gets its delivery, recorded as delivered.
        const next = (await t.admin('POST', '/admin/api/webhooks', { url: receiver.url, events: ['brand.*'] })).json() as { id: number };
        await t.admin('POST', '/admin/api/brands', { name: 'After the delete' });
        await until('the next delivery', () => receiver.held.length === 1);
        receiver.held.splice(0)[0].writeHead(204).end();
        await until('the next delivery recorded', async () => {
          const list = (await t.admin('GET', `/admin/api/webhooks/${next.id}/deliveries`)).json().data as Array<{ status: string }>;
          return list.length === 1 && list[0].status === 'delivered';
        });
        await t.admin('DELETE', `/admin/api/webhooks/${next.id}`);

        const orphans = await t.ctx.store.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', doomed.id).execute();
        assert.equal(orphans.length, 0, 'no attempt rows for the deleted subscription');
      } finally {
        await dispatcher.stop();
        await receiver.close();
      }
      const errors = lines.filter((l) => l.level >= 50);
      assert.deepEqual(errors.map((l) => l.msg), [], 'no error-level line');
    });
  });
}
