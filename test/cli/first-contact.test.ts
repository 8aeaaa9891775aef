// What a newcomer meets first on the command line: the version, a refused scope that lists the valid ones, a
// credentials table with a header, counts in the right number, and the second `npm start` (serve --demo on a
// database that has data) naming a command that works and the database it uses.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const execute = promisify(execFile);

describe('store-api first contact (SQLite)', () => {
  let dir: string;
  // As a user runs it: an empty directory (no .env), only PATH and HOME, the default database (./data/store.db).
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };
  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await execute(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    }
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-api-first-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints its version with --version and -V', async () => {
    for (const flag of ['--version', '-V']) {
      const out = await cli(flag);
      assert.equal(out.code, 0);
      assert.equal(out.stdout.trim(), VERSION);
    }
  });

  it('refuses an unknown scope naming it and listing every valid one', async () => {
    const out = await cli('credentials', 'create', '--name', 'x', '--scopes', 'products:read,product:read');
    assert.equal(out.code, 1);
    const line = out.stderr.trim();
    assert.match(line, /^store-api: unknown scope "product:read"; valid scopes: /);
    for (const scope of ALL_SCOPES) assert.ok(line.includes(scope), `${scope} is listed`);
    assert.match(line, /or "all"$/);
  });

  it('counts in the right number and lists credentials under a header row', async () => {
    const seeded = await cli('seed', '--products', '1', '--orders', '1');
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.match(seeded.stdout, /^Seeded 1 product \(\d+ parameter values?, \d+ filter values?\), 1 order, \d+ brands?, \d+ (category|categories) in /);
    assert.doesNotMatch(seeded.stdout, /\b1 (products|orders)\b/);

    assert.equal((await cli('credentials', 'create', '--name', 'first', '--scopes', 'products:read')).code, 0);
    let list = (await cli('credentials', 'list')).stdout.trim().split('\n');
    assert.match(list[0], /^ID\s+STATUS\s+CLIENT ID\s+NAME\s+SCOPES$/);
    assert.match(list[1], /^1\s+enabled\s+sda_\w+\s+first\s+products:read$/);
    assert.equal(list.at(-1), '1 credential');

    assert.equal((await cli('credentials', 'create', '--name', 'second one', '--scopes', 'all')).code, 0);
    list = (await cli('credentials', 'list')).stdout.trim().split('\n');
    assert.equal(list.length, 4);
    assert.equal(list.at(-1), '2 credentials');
    // The columns line up: every row's client id starts where the header's does.
    const column = list[0].indexOf('CLIENT ID');
    for (const row of list.slice(1, 3)) assert.equal(row.indexOf('sda_'), column);
  });

  it('a second `serve --demo` names a command that works and the database it uses', async () => {
    // The database already has data (the test above seeded ./data/store.db), as on the second `npm start`.
    const child = spawn(process.execPath, [BIN, 'serve', '--demo', '--port', '0'], { cwd: dir, env: { ...env, LOG_LEVEL: 'warn' } });
    let stdout = '';
    try {
      child.stdout.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no hint in 60 s: ${stdout}`)), 60_000);
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk;
          if (/npx store-api .*credentials create/.test(stdout)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stdout}`)));
      });
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    assert.match(stdout, /The database data\/store\.db already has data/);
    assert.doesNotMatch(stdout, /client secret:/, 'no demo credential on a database with data');
    const command = /^\s*npx store-api (.*credentials create.*)$/m.exec(stdout)![1].trim();
    assert.match(command, /^--database sqlite:data\/store\.db credentials create --name me --scopes all$/);
    // `npx store-api` is this package's bin; run it the same way, in the same directory.
    const made = await cli(...command.split(' '));
    assert.equal(made.code, 0, made.stderr);
    const listed = JSON.parse((await cli('credentials', 'list', '--json')).stdout) as Array<{ name: string; scopes: string[] }>;
    assert.deepEqual(listed.find((c) => c.name === 'me')?.scopes, ALL_SCOPES);
  });
});
