import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signature } from '../../../src/events/webhooks/sign.ts';
import { signedHeaders } from '../../../src/events/webhooks/send.ts';
import { newWebhookSecret } from '../../../src/events/webhooks/subscriptions.ts';

// Pure computation, the same on every database: no dialect loop.
describe('webhook signatures', () => {
  it('equal what the official Standard Webhooks library computes', () => {
    for (let i = 0; i < 50; i++) {
      const secret = i % 2 ? newWebhookSecret() : `whsec_${randomBytes(24 + i).toString('base64')}`;
      const payload = JSON.stringify({ type: 'product.updated', timestamp: new Date().toISOString(), data: { id: i, name: `Žluťoučký kůň ${'€'.repeat(i)} 🚲`, raw: randomBytes(i).toString('hex') } });
      const at = new Date(1_700_000_000_000 + i * 1_234_567);
      const msgId = `msg_${randomBytes(8).toString('hex')}`;
      assert.equal(signature(secret, msgId, Math.floor(at.getTime() / 1000), payload), new Webhook(secret).sign(msgId, at, payload));
    }
  });

  it('carry one signature per secret, each verifiable by the library', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const m = { url: 'http://127.0.0.1/', msgId: 'msg_abc', payload: '{"type":"brand.created","timestamp":"2026-11-21T00:00:00.000Z","data":{"id":1}}', secrets: [current, previous] };
    const headers = signedHeaders(m, new Date());
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [current, previous]) assert.deepEqual(new Webhook(secret).verify(m.payload, headers), JSON.parse(m.payload));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(m.payload, headers));
  });
});
