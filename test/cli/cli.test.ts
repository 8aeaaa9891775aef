import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TokenService } from '../../src/auth/tokens.ts';
import { hashingKey } from '../../src/auth/credentials.service.ts';
import { openStore } from '../../src/db/database.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));
const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The command as a user runs it: a child process in an empty directory (no .env), with only PATH and HOME
 * from the environment, against a temporary SQLite file.
 */
describe('store-api command line (SQLite)', { concurrency: 3 }, () => {
  let dir: string;
  let db: string;
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-api-cli-'));
    db = `sqlite:${join(dir, 'store.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cli = async (...args: string[]): Promise<Outcome> => {
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, ...(args[0] === '--database' ? [] : ['--database', db]), ...args], { cwd: dir, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    }
  };
  const ok = async (...args: string[]): Promise<unknown> => {
    const out = await cli(...args);
    assert.equal(out.code, 0, `${args.join(' ')}: ${out.stderr}`);
    return JSON.parse(out.stdout);
  };

  it('migrates, seeds and manages credentials', async () => {
    const migrated = await ok('migrate', '--json') as { applied: string[]; dialect: string };
    assert.ok(migrated.applied.includes('2026-11-21-001-core'), JSON.stringify(migrated));
    assert.equal(migrated.dialect, 'sqlite');
    assert.deepEqual((await ok('migrate', '--json') as { applied: string[] }).applied, [], 'a second run has nothing to do');

    const seeded = await ok('seed', '--products', '50', '--orders', '10', '--json') as Record<string, number>;
    assert.equal(seeded.products, 50);
    assert.equal(seeded.orders, 10);
    assert.ok(seeded.brands > 0 && seeded.categories > 0 && seeded.productParameters > 0 && seeded.productFilters > 0);

    const created = await ok('credentials', 'create', '--name', 'x', '--scopes', 'products:read', '--json') as { id: number; name: string; clientId: string; clientSecret: string; scopes: string[] };
    assert.deepEqual(Object.keys(created).sort(), ['clientId', 'clientSecret', 'id', 'name', 'scopes']);
    assert.equal(created.name, 'x');
    assert.deepEqual(created.scopes, ['products:read']);

    const store = openStore(db);
    try {
      assert.equal(Number((await store.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 50);
      const tokens = new TokenService(store.db, await hashingKey(store.db), 7200);
      assert.equal((await tokens.authenticateClient(created.clientId, created.clientSecret)).ok, true, 'the printed secret works');

      const listed = await ok('credentials', 'list', '--json') as Array<Record<string, unknown>>;
      assert.equal(listed.length, 1);
      assert.equal(listed[0].clientId, created.clientId);
      assert.equal('clientSecret' in listed[0], false);

      assert.equal((await ok('credentials', 'disable', created.clientId, '--json') as { enabled: boolean }).enabled, false);
      assert.equal((await tokens.authenticateClient(created.clientId, created.clientSecret)).ok, false);
      assert.equal((await ok('credentials', 'enable', String(created.id), '--json') as { enabled: boolean }).enabled, true);
      const rotated = await ok('credentials', 'rotate', String(created.id), '--json') as { clientSecret: string };
      assert.notEqual(rotated.clientSecret, created.clientSecret);
      assert.equal((await tokens.authenticateClient(created.clientId, created.clientSecret)).ok, false, 'the old secret stops working');
      assert.equal((await tokens.authenticateClient(created.clientId, rotated.clientSecret)).ok, true);
      await ok('credentials', 'delete', created.clientId, '--json');
      assert.equal((await store.db.selectFrom('credentials').selectAll().execute()).length, 0);
    } finally {
      await store.close();
    }
  });

  it('refuses bad input with a non-zero exit and a one-line reason on stderr', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['credentials', 'create', '--name', 'x', '--scopes', 'products:read,bogus'], /bogus/],
      [['credentials', 'create', '--scopes', 'products:read'], /--name/],
      [['seed', '--products', 'abc'], /--products.*abc/],
      [['credentials', 'disable', 'sda_nosuchclient'], /not found/],
      [['no-such-command'], /no-such-command/],
    ];
    // A database of their own for each (the tests of this suite run at the same time): this case is about the
    // messages. (Five processes opening one new file at once once ended one of them "database is locked": the
    // switch to WAL, now retried; test/db/sqlite-open.test.ts holds that case.)
    const outcomes = await Promise.all(cases.map(([args], k) => cli('--database', `sqlite:${join(dir, `bad-input-${k}.db`)}`, ...args)));
    for (const [k, out] of outcomes.entries()) {
      const [args, reason] = cases[k];
      assert.notEqual(out.code, 0, `${args.join(' ')} should fail`);
      const lines = out.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${args.join(' ')}: one line, got ${JSON.stringify(out.stderr)}`);
      assert.match(lines[0], /^store-api: /);
      assert.match(lines[0], reason);
      assert.doesNotMatch(out.stderr, /\n\s+at /, 'no stack trace');
    }
    // Orders without products to order: a store of its own, empty, so nothing else writes beside it.
    const empty = await cli('--database', `sqlite:${join(dir, 'no-products.db')}`, 'seed', '--products', '0', '--orders', '5');
    assert.notEqual(empty.code, 0);
    assert.match(empty.stderr.trim(), /^store-api: Orders need products/);
    const badUrl = await run(process.execPath, [BIN, '--database', 'mysql://nope', 'migrate'], { cwd: dir, env }).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.ok(badUrl && badUrl.code !== 0);
    assert.match(badUrl.stderr.trim(), /^store-api: DATABASE_URL must start with sqlite: or postgres:\/\//);
  });

  it('serve --demo --port 0 seeds a demo store and prints a curl line that works', async () => {
    const demoDb = `sqlite:${join(dir, 'demo.db')}`;
    const child = spawn(process.execPath, [BIN, '--database', demoDb, 'serve', '--demo', '--demo-products', '30', '--port', '0'], { cwd: dir, env: { ...env, LOG_LEVEL: 'warn' } });
    try {
      let stdout = '';
      child.stdout.setEncoding('utf8');
      const curlLine = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no curl line in 60 s: ${stdout}`)), 60_000);
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk;
          const line = stdout.split('\n').find((l) => /^\s*curl -s /.test(l));
          if (line) {
            clearTimeout(timer);
            resolve(line.trim());
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stdout}`)));
      });
      assert.doesNotMatch(curlLine, /:0\//, 'the line names the port actually used');
      assert.match(stdout, /client secret: sds_/);
      const { stdout: answer } = await run('bash', ['-c', curlLine], { cwd: dir, env, timeout: 30_000 });
      const body = JSON.parse(answer) as { data: Array<{ id: number; articleNumber: string }>; pagination: { limit: number; hasMore: boolean } };
      assert.equal(body.data.length, 2);
      assert.equal(body.pagination.limit, 2);
      assert.equal(body.pagination.hasMore, true);
      assert.match(body.data[0].articleNumber, /^SKU-/);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0, 'SIGTERM stops the server cleanly');
    }
  });
});
