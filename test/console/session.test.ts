// The console's sign-in, session cookie and CSRF rules, over HTTP (app.inject), on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pruneSessions } from '../../src/console/session.ts';
import { FailureThrottle } from '../../src/ratelimit/failures.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { anotherNode, form, parseSetCookie, setCookies, signIn } from './console-client.ts';

const credentialCount = async (t: TestApp) => Number((await t.database.store.db.selectFrom('credentials').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const sessionRows = (t: TestApp) => t.database.store.db.selectFrom('console_sessions').selectAll().execute();
const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
const newCredential = { name: 'ERP', scopes: ['products:read', 'orders:read'] };

for (const dialect of await dialects()) {
  describe(`console sessions and CSRF (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    it('without a session, pages redirect to the sign-in page and actions are refused with 401, changing nothing', async () => {
      for (const url of ['/admin', '/admin/credentials', '/admin/webhooks', '/admin/usage', '/admin/sync', '/admin/credentials/new']) {
        const res = await t.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 303, url);
        assert.equal(res.headers.location, '/admin/sign-in', url);
      }
      const before = await credentialCount(t);
      for (const cookie of [undefined, 'sda_console=sdc_' + 'A'.repeat(43), 'sda_console=garbage']) {
        const res = await t.app.inject({ method: 'POST', url: '/admin/credentials', headers: { ...formHeaders, ...(cookie ? { cookie } : {}) }, payload: form({ ...newCredential, _csrf: 'x' }) });
        assert.equal(res.statusCode, 401, String(cookie));
        assert.match(String(res.headers['content-type']), /^text\/html/);
      }
      assert.equal(await credentialCount(t), before);
      const page = await t.app.inject({ method: 'GET', url: '/admin/sign-in' });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<label for="token">Admin token<\/label>/);
    });

    it('a sign-in sets an HttpOnly, SameSite=Strict cookie with an expiry; the database keeps only a keyed hash of its id', async () => {
      const wrong = await t.app.inject({ method: 'POST', url: '/admin/sign-in', remoteAddress: '198.51.100.7', headers: formHeaders, payload: form({ token: 'not-the-token' }) });
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(setCookies(wrong), []);

      const res = await t.app.inject({ method: 'POST', url: '/admin/sign-in', headers: formHeaders, payload: form({ token: ADMIN_TOKEN }) });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/admin/credentials');
      const cookie = parseSetCookie(setCookies(res)[0]);
      assert.equal(cookie.name, 'sda_console');
      assert.match(cookie.value, /^sdc_[A-Za-z0-9_-]{43}$/);
      assert.ok(cookie.attributes.has('httponly'));
      assert.equal(cookie.attributes.get('samesite'), 'Strict');
      assert.equal(cookie.attributes.get('path'), '/admin');
      assert.equal(cookie.attributes.get('max-age'), String(12 * 3600));
      assert.ok(!cookie.attributes.has('secure'), 'plain http: not Secure (the browser would never send it back)');

      const rows = await sessionRows(t);
      assert.ok(rows.length >= 1);
      for (const row of rows) assert.ok(!Object.values(row).some((v) => String(v).includes(cookie.value)), 'the session id itself is not stored');

      const page = await t.app.inject({ method: 'GET', url: '/admin/credentials', headers: { cookie: `${cookie.name}=${cookie.value}` } });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.equal(page.headers['x-frame-options'], 'DENY');
    });

    it('the cookie is Secure (and __Host-) when PUBLIC_URL is https, or a trusted proxy says https; an untrusted X-Forwarded-Proto changes nothing', async () => {
      const cases: Array<{ env: Record<string, string>; headers: Record<string, string>; secure: boolean }> = [
        { env: { PUBLIC_URL: 'https://store.test' }, headers: {}, secure: true },
        { env: { CONSOLE_TRUST_FORWARDED_PROTO: 'true' }, headers: { 'x-forwarded-proto': 'https' }, secure: true },
        { env: {}, headers: { 'x-forwarded-proto': 'https' }, secure: false },
      ];
      for (const c of cases) {
        const node = await anotherNode(t, c.env);
        try {
          const res = await node.app.inject({ method: 'POST', url: '/admin/sign-in', headers: { ...formHeaders, ...c.headers }, payload: form({ token: ADMIN_TOKEN }) });
          assert.equal(res.statusCode, 303);
          const cookie = parseSetCookie(setCookies(res)[0]);
          assert.equal(cookie.attributes.has('secure'), c.secure, JSON.stringify(c));
          assert.equal(cookie.name, c.secure ? '__Host-sda_console' : 'sda_console');
          assert.equal(cookie.attributes.get('path'), c.secure ? '/' : '/admin');
          assert.ok(cookie.attributes.has('httponly'));
          assert.equal(cookie.attributes.get('samesite'), 'Strict');
          if (c.secure) {
            const page = await node.app.inject({ method: 'GET', url: '/admin/credentials', headers: { ...c.headers, cookie: `${cookie.name}=${cookie.value}` } });
            assert.equal(page.statusCode, 200, 'the Secure cookie opens the console over https');
          }
        } finally {
          await node.app.close();
        }
      }
    });

    it('a forged cross-site POST (no token, a wrong token, another session\'s token, a foreign Origin, Sec-Fetch-Site: cross-site) gets 403 and changes nothing', async () => {
      const admin = await signIn(t.app);
      const other = await signIn(t.app);
      const before = await credentialCount(t);
      const forged: Array<[string, Record<string, string | string[]>, Record<string, string>]> = [
        ['no token', { ...newCredential, _csrf: '' }, {}],
        ['wrong token', { ...newCredential, _csrf: 'A'.repeat(43) }, {}],
        ['another session\'s token', { ...newCredential, _csrf: other.csrf }, {}],
        ['foreign origin', newCredential, { origin: 'https://evil.example' }],
        ['opaque origin', newCredential, { origin: 'null' }],
        ['cross-site fetch', newCredential, { 'sec-fetch-site': 'cross-site' }],
        ['same-site fetch', newCredential, { 'sec-fetch-site': 'same-site' }],
      ];
      for (const [what, fields, headers] of forged) {
        const res = await admin.post('/admin/credentials', fields, headers);
        assert.equal(res.statusCode, 403, what);
        assert.match(res.body, /Nothing was changed/, what);
      }
      // The token also cannot be left out of the form altogether.
      const bare = await t.app.inject({ method: 'POST', url: '/admin/credentials', headers: { ...formHeaders, cookie: admin.cookie }, payload: form(newCredential) });
      assert.equal(bare.statusCode, 403);
      assert.equal(await credentialCount(t), before);

      // The same request from the console's own page goes through: the Origin of PUBLIC_URL, or of the Host it was sent to.
      for (const origin of ['http://store.test', 'http://127.0.0.1:3999']) {
        const ok = await admin.post('/admin/credentials', { ...newCredential, name: `ERP ${origin}` }, { origin, host: new URL(origin).host });
        assert.equal(ok.statusCode, 201, ok.body);
        assert.match(ok.body, /sds_[A-Za-z0-9_-]{43}/);
      }
      assert.equal(await credentialCount(t), before + 2);
      // A token in the header works for scripts.
      const viaHeader = await t.app.inject({ method: 'POST', url: '/admin/credentials', headers: { ...formHeaders, cookie: admin.cookie, 'x-csrf-token': admin.csrf }, payload: form({ ...newCredential, name: 'via header' }) });
      assert.equal(viaHeader.statusCode, 201);
    });

    it('a cross-site sign-in is refused before the token is looked at', async () => {
      const before = (await sessionRows(t)).length;
      const res = await t.app.inject({ method: 'POST', url: '/admin/sign-in', headers: { ...formHeaders, origin: 'https://evil.example' }, payload: form({ token: ADMIN_TOKEN }) });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(setCookies(res), []);
      assert.equal((await sessionRows(t)).length, before);
    });

    it('wrong tokens are throttled per source address (an IPv6 /64 counts as one), and while throttled even the right token is refused', async () => {
      // The admin API's throttle, with its allowance of failures set low and practically no refill during the test.
      const th = await createTestApp(dialect, { env: { ADMIN_FAILURE_RATE_LIMIT_RPS: '0.01', ADMIN_FAILURE_RATE_LIMIT_BURST: '10' } });
      try {
        const post = (token: string, remoteAddress: string) => th.app.inject({ method: 'POST', url: '/admin/sign-in', remoteAddress, headers: formHeaders, payload: form({ token }) });
        for (let i = 0; i < 10; i++) assert.equal((await post(`wrong-${i}`, '203.0.113.9')).statusCode, 401);
        const throttled = await post('wrong-again', '203.0.113.9');
        assert.equal(throttled.statusCode, 429);
        assert.ok(Number(throttled.headers['retry-after']) >= 1);
        const right = await post(ADMIN_TOKEN, '203.0.113.9');
        assert.equal(right.statusCode, 429, 'the right token is not checked while throttled');
        assert.deepEqual(setCookies(right), []);
        assert.equal((await post(ADMIN_TOKEN, '203.0.113.10')).statusCode, 303, 'another address is not affected');

        for (let i = 0; i < 10; i++) assert.equal((await post(`wrong-${i}`, `2001:db8:1:2::${i + 1}`)).statusCode, 401);
        assert.equal((await post(ADMIN_TOKEN, '2001:db8:1:2:ffff::7')).statusCode, 429, 'the same /64');
        assert.equal((await post(ADMIN_TOKEN, '2001:db8:1:3::1')).statusCode, 303, 'another /64');
      } finally {
        await th.close();
      }
    });

    it('the console and the admin API share one allowance of wrong tokens per address (both doors take the admin token)', async () => {
      const th = await createTestApp(dialect, { env: { ADMIN_FAILURE_RATE_LIMIT_RPS: '0.01', ADMIN_FAILURE_RATE_LIMIT_BURST: '4' } });
      try {
        const signInWith = (token: string, remoteAddress: string) => th.app.inject({ method: 'POST', url: '/admin/sign-in', remoteAddress, headers: formHeaders, payload: form({ token }) });
        const api = (token: string, remoteAddress: string) => th.app.inject({ method: 'GET', url: '/admin/api/credentials', remoteAddress, headers: { authorization: `Bearer ${token}` } });
        // Two wrong guesses through each door use up the allowance of four: both doors refuse the right token now.
        for (let i = 0; i < 2; i++) assert.equal((await api(`wrong-${i}`, '198.51.100.7')).statusCode, 401);
        for (let i = 0; i < 2; i++) assert.equal((await signInWith(`wrong-${i}`, '198.51.100.7')).statusCode, 401);
        assert.equal((await signInWith(ADMIN_TOKEN, '198.51.100.7')).statusCode, 429);
        assert.equal((await api(ADMIN_TOKEN, '198.51.100.7')).statusCode, 429);
        // And the other way round, on another address: the API's failures alone close the console's door.
        for (let i = 0; i < 4; i++) assert.equal((await api(`wrong-${i}`, '198.51.100.8')).statusCode, 401);
        assert.equal((await signInWith(ADMIN_TOKEN, '198.51.100.8')).statusCode, 429);
        assert.equal(th.ctx.adminFailures.size, 2);
      } finally {
        await th.close();
      }
    });

    it('the throttle holds at most its bound of addresses', () => {
      const throttle = new FailureThrottle({ name: 'test', burst: 2, rps: 0.01 }, 50);
      for (let i = 0; i < 1000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
      assert.equal(throttle.size, 50);
      throttle.failed('192.0.2.1');
      throttle.failed('192.0.2.1');
      assert.ok(throttle.retryAfter('192.0.2.1') > 0);
      assert.equal(throttle.retryAfter('192.0.2.2'), 0);
    });

    it('sign-out ends the session (needs the CSRF token), on every node', async () => {
      const admin = await signIn(t.app);
      const refused = await admin.post('/admin/sign-out', { _csrf: 'forged' });
      assert.equal(refused.statusCode, 403);
      assert.equal((await admin.get('/admin/credentials')).statusCode, 200, 'a forged sign-out does not end the session');

      const res = await admin.post('/admin/sign-out', {});
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/admin/sign-in');
      const cleared = parseSetCookie(setCookies(res)[0]);
      assert.equal(cleared.name, 'sda_console');
      assert.equal(cleared.value, '');
      const after = await admin.get('/admin/credentials');
      assert.equal(after.statusCode, 303);
      const node = await anotherNode(t);
      try {
        assert.equal((await node.app.inject({ method: 'GET', url: '/admin/credentials', headers: { cookie: admin.cookie } })).statusCode, 303);
      } finally {
        await node.app.close();
      }
    });

    it('use moves a session\'s expiry forward by the idle time, never past the longest session', async () => {
      const admin = await signIn(t.app);
      const db = t.database.store.db;
      const soon = new Date(Date.now() + 5000).toISOString();
      await db.updateTable('console_sessions').set({ expires_at: soon }).where('expires_at', '>', new Date().toISOString()).execute();
      assert.equal((await admin.get('/admin/credentials')).statusCode, 200);
      const slid = Math.max(...(await sessionRows(t)).map((r) => Date.parse(r.expires_at)));
      assert.ok(slid > Date.now() + 29 * 60_000 && slid <= Date.now() + 30 * 60_000, 'thirty idle minutes from now');

      const createdLongAgo = new Date(Date.now() - 12 * 3_600_000 + 60_000).toISOString();
      await db.updateTable('console_sessions').set({ created_at: createdLongAgo, expires_at: soon }).execute();
      assert.equal((await admin.get('/admin/credentials')).statusCode, 200);
      for (const row of await sessionRows(t)) assert.ok(Date.parse(row.expires_at) <= Date.parse(createdLongAgo) + 12 * 3_600_000, 'capped at twelve hours after sign-in');
    });

    it('a session works on every node of the store, ends when it expires (and is pruned), and ends when ADMIN_TOKEN changes', async () => {
      const admin = await signIn(t.app);
      const same = await anotherNode(t);
      const rotated = await anotherNode(t, { ADMIN_TOKEN: 'another-admin-token-0123456789abcdefghij' });
      try {
        assert.equal((await same.app.inject({ method: 'GET', url: '/admin/credentials', headers: { cookie: admin.cookie } })).statusCode, 200);
        const created = await same.app.inject({ method: 'POST', url: '/admin/credentials', headers: { ...formHeaders, cookie: admin.cookie }, payload: form({ ...newCredential, _csrf: admin.csrf }) });
        assert.equal(created.statusCode, 201, 'the CSRF token of one node is good on another');
        assert.equal((await rotated.app.inject({ method: 'GET', url: '/admin/credentials', headers: { cookie: admin.cookie } })).statusCode, 303);
      } finally {
        await same.app.close();
        await rotated.app.close();
      }
      await t.database.store.db.updateTable('console_sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
      assert.equal((await admin.get('/admin/credentials')).statusCode, 303);
      assert.ok((await pruneSessions(t.ctx)) >= 1);
      assert.equal((await sessionRows(t)).length, 0);
    });
  });
}
