import type { Command } from 'commander';
import { DELIVERY_STATUSES, getDelivery, listDeliveries, replay, type Delivery, type DeliveryStatus } from '../events/webhooks/deliveries.ts';
import { EVENT_TYPES, parsePatterns } from '../events/webhooks/patterns.ts';
import * as service from '../events/webhooks/subscriptions.ts';
import { fail, printResult } from './output.ts';
import { withStore, type GlobalOptions } from './store.ts';
import { count } from './words.ts';

function webhookId(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) fail(`webhook id must be a positive integer, got "${raw}"`);
  return Number(raw);
}

function positive(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) fail(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

const line = (w: service.Webhook) => `${w.id}\t${w.enabled ? 'enabled ' : 'disabled'}\t${w.url}\t${w.events.join(',')}${w.disabledReason ? `\t(${w.disabledReason})` : ''}`;
const deliveryLine = (d: Delivery) =>
  `${d.id}\t${d.messageId}\t${d.eventType}#${d.eventSeq}\t${d.status}\tattempts ${d.attempts}${d.lastStatus ? `\tlast HTTP ${d.lastStatus}` : ''}${d.lastError && d.status !== 'delivered' ? `\t${d.lastError}` : ''}`;

/** `store-api webhooks …`: subscriptions, their deliveries and replays (API.md §6, §11). */
export function registerWebhooks(program: Command): void {
  const cmd = program.command('webhooks').description('Manage webhook subscriptions (signed Standard Webhooks deliveries of store events)');
  const global = () => program.opts<GlobalOptions>();

  cmd
    .command('add')
    .description('Subscribe a URL to events; prints the whsec_ signing secret once')
    .requiredOption('--url <url>', 'where to POST (public addresses only unless WEBHOOK_ALLOW_PRIVATE=true)')
    .requiredOption('--events <list>', `comma list of event types or patterns with *: ${EVENT_TYPES.join(', ')}`)
    .option('--description <text>', 'what the subscription is for')
    .option('--json', 'machine-readable output')
    .action(async (o: { url: string; events: string; description?: string; json?: boolean }) => {
      await withStore(global(), async (store, config) => {
        const w = await service.createWebhook(store.db, { url: o.url, events: parsePatterns(o.events), description: o.description }, config.webhooks.allowPrivate);
        printResult(Boolean(o.json), { id: w.id, url: w.url, events: w.events, secret: w.secret }, () =>
          [`Created webhook ${w.id} → ${w.url}`, `  events: ${w.events.join(', ')}`, `  secret: ${w.secret}  (shown only now; verify deliveries with any Standard Webhooks library)`].join('\n'));
      });
    });

  cmd
    .command('list')
    .description('List subscriptions, with why any is disabled')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      await withStore(global(), async (store) => {
        const list = await service.listWebhooks(store.db);
        printResult(Boolean(o.json), list, () => (list.length ? list.map(line).join('\n') : 'No webhooks.'));
      });
    });

  const byId = (name: string, description: string, run: (db: Parameters<typeof service.getWebhook>[0], id: number, allowPrivate: boolean) => Promise<unknown>, human: string) =>
    cmd
      .command(`${name} <id>`)
      .description(description)
      .option('--json', 'machine-readable output')
      .action(async (raw: string, o: { json?: boolean }) => {
        await withStore(global(), async (store, config) => {
          const id = webhookId(raw);
          const result = await run(store.db, id, config.webhooks.allowPrivate);
          printResult(Boolean(o.json), result ?? { id, [name]: true }, () => human);
        });
      });

  byId('remove', 'Delete a subscription and its delivery log', async (db, id) => { await service.deleteWebhook(db, id); return undefined; }, 'Removed.');
  byId('disable', 'Stop deliveries to a subscription (pending ones wait)', (db, id, allow) => service.updateWebhook(db, id, { enabled: false }, allow), 'Disabled.');
  byId('enable', 'Resume deliveries to a subscription and clear why it was disabled', (db, id, allow) => service.updateWebhook(db, id, { enabled: true }, allow), 'Enabled.');

  cmd
    .command('rotate-secret <id>')
    .description('Issue a new secret; deliveries are signed with both for the overlap')
    .option('--overlap <seconds>', 'how long the previous secret also signs', String(service.DEFAULT_ROTATION_OVERLAP_SECONDS))
    .option('--json', 'machine-readable output')
    .action(async (raw: string, o: { overlap: string; json?: boolean }) => {
      await withStore(global(), async (store) => {
        const w = await service.rotateWebhookSecret(store.db, webhookId(raw), positive('--overlap', o.overlap));
        printResult(Boolean(o.json), { id: w.id, secret: w.secret, previousSecretExpiresAt: w.previousSecretExpiresAt }, () =>
          `New secret: ${w.secret}  (shown only now)${w.previousSecretExpiresAt ? `\nThe previous secret also signs until ${w.previousSecretExpiresAt}.` : ''}`);
      });
    });

  cmd
    .command('deliveries <id>')
    .description('Deliveries of a subscription, newest first; with --delivery, one of them with every attempt')
    .option('--status <status>', `only ${DELIVERY_STATUSES.join(' | ')}`)
    .option('--limit <n>', 'how many', '50')
    .option('--delivery <ref>', 'one delivery, by id or msg_… id, with its attempt log')
    .option('--json', 'machine-readable output')
    .action(async (raw: string, o: { status?: string; limit: string; delivery?: string; json?: boolean }) => {
      if (o.status && !(DELIVERY_STATUSES as readonly string[]).includes(o.status)) fail(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const limit = positive('--limit', o.limit)!;
      if (limit < 1 || limit > 1000) fail('--limit must be between 1 and 1000');
      await withStore(global(), async (store) => {
        const id = webhookId(raw);
        await service.getWebhook(store.db, id);
        if (o.delivery) {
          const d = await getDelivery(store.db, id, o.delivery);
          printResult(Boolean(o.json), d, () =>
            [deliveryLine(d), ...d.attemptLog.map((a) => `  #${a.attempt}\t${a.startedAt}\t${a.durationMs} ms\t${a.statusCode ?? '-'}\t${a.error ?? 'ok'}\t${a.node}`)].join('\n'));
          return;
        }
        const page = await listDeliveries(store.db, id, { status: o.status as DeliveryStatus | undefined, limit });
        printResult(Boolean(o.json), page.data, () => (page.data.length ? page.data.map(deliveryLine).join('\n') : 'No deliveries.'));
      });
    });

  cmd
    .command('replay <id>')
    .description('Send again (same webhook-id): every failed delivery, one (--delivery), or every matching event since a time (--since)')
    .option('--delivery <ref>', 'delivery id or msg_… id')
    .option('--since <date-time>', 'RFC 3339 instant')
    .option('--json', 'machine-readable output')
    .action(async (raw: string, o: { delivery?: string; since?: string; json?: boolean }) => {
      if (o.since && Number.isNaN(Date.parse(o.since))) fail(`--since must be a date-time, got "${o.since}"`);
      await withStore(global(), async (store) => {
        const result = await replay(store.db, webhookId(raw), { delivery: o.delivery, since: o.since });
        printResult(Boolean(o.json), result, () => `Queued ${count(result.queued, 'delivery', 'deliveries')}; a running server sends them within a second.`);
      });
    });
}
