// The real values the fuzzer mixes in, read from a seeded app: credentials of every kind, item ids and
// field values of every listing, cursors, a webhook with deliveries. Random ids almost never exist; these
// reach the code behind the 404, and make 2xx answers (whose bodies are checked) common.
import assert from 'node:assert/strict';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { fanOut } from '../../src/events/webhooks/outbox.ts';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.ts';
import type { OpenApiDocument, OperationRef } from './document.ts';
import type { Credentials } from './requests.ts';
import type { Hints } from './values.ts';

export interface Fixtures {
  creds: Credentials;
  /** The hints of one operation: the shared ones, with `id` and `cursor` of its own collection. */
  hintsFor(o: OperationRef): Hints;
}

/** A public address that no request is sent to (no dispatcher runs in the suite), so no DNS is needed. */
const PUBLIC_TARGET = 'https://93.184.215.14/hooks';

/** Subscription URLs that the SSRF guard must refuse or accept without a crash; none needs a DNS answer. */
const WEBHOOK_URLS = [PUBLIC_TARGET, 'http://127.0.0.1:9/x', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::127.0.0.1]/', 'http://169.254.169.254/latest/meta-data',
  'http://0x7f000001/', 'http://2130706433/', 'http://[64:ff9b:1::a00:1]/', 'http://[2002:7f00:1::]/', 'http://localhost/', 'ftp://93.184.215.14/', 'https://user:pw@93.184.215.14/',
  'file:///etc/passwd', 'javascript:alert(1)', 'http://93.184.215.14:99999/', 'http://[::]/', 'http://0/', 'https://93.184.215.14/' + 'a'.repeat(1990)];

const EVENT_PATTERNS = [['*'], ['product.*'], ['order.created', 'order.status_changed'], ['*.deleted'], ['brand.updated', 'brand.*'], ['*'.repeat(30) + 'x'], ['nothing.matches']];

function add(map: Map<string, unknown[]>, name: string, value: unknown): void {
  if (value === undefined || (typeof value === 'object' && value !== null)) return;
  const list = map.get(name) ?? [];
  if (list.length < 20 && !list.includes(value)) list.push(value);
  map.set(name, list);
}

/** Reads every list of the document once (the API's with an all-scope token, the admin's with the admin token). */
export async function prepareFixtures(t: TestApp, doc: OpenApiDocument, ops: OperationRef[]): Promise<Fixtures> {
  const all = await t.credential(ALL_SCOPES);
  const byScope = new Map<string, string>();
  for (const scope of ALL_SCOPES) byScope.set(scope, (await t.credential([scope])).token);
  // The token endpoint is fuzzed with a credential of its own: tokens it mints must not crowd out `all`'s.
  const minted = await t.credential(ALL_SCOPES);
  const creds: Credentials = { adminToken: ADMIN_TOKEN, allScopes: all.token, byScope };

  // A subscription with deliveries, for the deliveries routes.
  const hook = await t.admin('POST', '/admin/api/webhooks', { url: PUBLIC_TARGET, events: ['*'], description: 'fuzz' });
  assert.equal(hook.statusCode, 201, hook.body);
  const webhookId = Number(hook.json().id);
  const product = await t.get('/api/v2/products?limit=1', all.token);
  const productId = Number(product.json().data[0].id);
  assert.equal((await t.admin('PATCH', `/admin/api/products/${productId}`, { stock: 7 })).statusCode, 200);
  while ((await fanOut(t.database.store, new Date().toISOString())).read > 0);

  const shared = new Map<string, unknown[]>();
  // Field values of each listing: its own come first for its operations (a product's `status` is not an order's).
  const own = new Map<string, Map<string, unknown[]>>();
  const ids = new Map<string, unknown[]>();
  const cursors = new Map<string, unknown[]>();
  for (const o of ops) {
    if (o.method !== 'GET' || o.path.includes('{')) continue;
    const token = o.auth.kind === 'admin' ? ADMIN_TOKEN : all.token;
    const pages = o.op.parameters?.some((p) => p.name === 'limit') ? '?limit=20' : '';
    const res = await t.get(`${o.path}${pages}`, token);
    if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('application/json')) continue;
    const body = res.json() as { data?: Array<Record<string, unknown>>; pagination?: { nextCursor?: unknown } };
    if (!Array.isArray(body.data)) continue;
    const fields = new Map<string, unknown[]>();
    own.set(o.path, fields);
    for (const item of body.data) {
      for (const [name, value] of Object.entries(item)) {
        add(shared, name, value);
        add(fields, name, value);
      }
      add(ids, o.path, item.id ?? item.seq);
    }
    if (body.pagination?.nextCursor) add(cursors, o.path, body.pagination.nextCursor);
    const listIds = ids.get(o.path) ?? [];
    if (listIds.length >= 2) add(shared, 'ids', `${listIds[0]},${listIds[1]}`);
  }
  const deliveries = await t.admin('GET', `/admin/api/webhooks/${webhookId}/deliveries`);
  assert.equal(deliveries.statusCode, 200, deliveries.body);
  const delivered = (deliveries.json().data as Array<{ id: number; messageId: string }>);
  assert.ok(delivered.length > 0, 'the fixture webhook has deliveries');
  for (const d of delivered) {
    add(shared, 'delivery', String(d.id));
    add(shared, 'delivery', d.messageId);
  }
  const page = await t.admin('GET', `/admin/api/webhooks/${webhookId}/deliveries?limit=1`);
  add(cursors, '/admin/api/webhooks/{id}/deliveries', page.json().pagination?.nextCursor ?? undefined);
  const changes = ids.get('/api/v2/changes') ?? [];
  for (const seq of changes) {
    add(shared, 'after', seq);
    add(cursors, '/api/v2/changes', String(seq));
  }

  // Filters named for a field they compare with.
  for (const [param, field] of [['updatedSince', 'updatedAt'], ['createdFrom', 'createdAt'], ['createdTo', 'createdAt'], ['since', 'createdAt']]) shared.set(param, shared.get(field) ?? []);
  shared.set('client_id', [minted.clientId]);
  shared.set('client_secret', [minted.clientSecret]);
  shared.set('grant_type', ['client_credentials']);
  shared.set('scope', ['products:read', 'products:read orders:read', ALL_SCOPES.join(' ')]);
  shared.set('authorization', [`Basic ${Buffer.from(`${minted.clientId}:${minted.clientSecret}`).toString('base64')}`, `Basic ${Buffer.from(`${minted.clientId}:wrong`).toString('base64')}`]);
  shared.set('url', WEBHOOK_URLS);
  shared.set('events', EVENT_PATTERNS);

  return {
    creds,
    hintsFor: (o) => {
      // The collection an operation belongs to: its own listing, or the public listing of an admin collection.
      const base = o.path.replace(/\/\{id\}.*$/, '');
      const list = own.has(base) ? base : base.replace('/admin/api/', '/api/v2/');
      const hints = new Map([...shared, ...(own.get(list) ?? [])]);
      const listIds = ids.get(list);
      if (o.path.startsWith('/admin/api/webhooks/{id}')) hints.set('id', [webhookId]);
      else if (listIds?.length) hints.set('id', listIds);
      hints.set('cursor', cursors.get(o.path) ?? []);
      return hints;
    },
  };
}
