// The command's build (bin/app-build.js): `store-api` runs dist/app/ only while it is at least as new as every
// source file and package.json, and the build itself works as the sources do: the version, a server that answers,
// the console's static files (found from the package's root, not from a chunk's own URL), and no TypeScript loader.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ROOT, buildApp, freshBuild } from '../../bin/app-build.js';

const execute = promisify(execFile);
const RECORDER = fileURLToPath(new URL('../mcp/fixtures/record-modules.mjs', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('freshBuild: which build the command may run', () => {
  let dir: string;
  const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
  const file = (path: string, seconds: number) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'x');
    utimesSync(path, at(seconds), at(seconds));
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-api-build-'));
    file(join(dir, 'src', 'a.ts'), 10);
    file(join(dir, 'src', 'deep', 'b.ts'), 20);
    file(join(dir, 'package.json'), 5);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const fresh = () => freshBuild(join(dir, 'src'), join(dir, 'builds'), join(dir, 'package.json'));

  it('none without a build, nor with a build that never finished', () => {
    assert.equal(fresh(), undefined);
    file(join(dir, 'builds', 'one', 'main.js'), 30);
    writeFileSync(join(dir, 'builds', 'current'), 'one\n');
    assert.equal(fresh(), undefined, 'no .built marker: the build did not finish');
  });

  it('the build named by `current` while it is at least as new as every source and package.json', () => {
    file(join(dir, 'builds', 'one', '.built'), 30);
    assert.equal(fresh(), join(dir, 'builds', 'one', 'main.js'));
  });

  it('none once a source in any folder, or package.json, is newer', () => {
    file(join(dir, 'src', 'deep', 'b.ts'), 31);
    assert.equal(fresh(), undefined, 'an edited source');
    file(join(dir, 'src', 'deep', 'b.ts'), 20);
    assert.ok(fresh());
    file(join(dir, 'package.json'), 40);
    assert.equal(fresh(), undefined, 'changed dependencies');
  });
});

describe('store-api from its sources', () => {
  it('runs them through tsx with STORE_API_FROM_SOURCES=1 (as when the build is stale)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-sources-'));
    try {
      const record = join(dir, 'modules');
      writeFileSync(record, '');
      const { stdout } = await execute(process.execPath, ['--import', RECORDER, join(ROOT, 'bin', 'store-api.js'), '--version'], { env: { ...process.env, STORE_API_FROM_SOURCES: '1', RECORD_MODULES_FILE: record } });
      assert.equal(stdout.trim(), VERSION);
      const modules = readFileSync(record, 'utf8');
      assert.match(modules, /\/node_modules\/tsx\//, 'tsx compiles the sources');
      assert.match(modules, /\/src\/cli\/main\.ts/);
      assert.doesNotMatch(modules, /\/dist\/app\//);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the build runs as the sources do', () => {
  let builds: string;
  let build: string;
  before(async () => {
    // Inside the package, as dist/app/ is, so that node_modules and the package's root are found from it.
    builds = join(ROOT, 'dist', `test-app-${process.pid}`);
    build = await buildApp(ROOT, builds);
  });
  after(() => rmSync(builds, { recursive: true, force: true }));

  it('names the new build in `current`, and it is fresh', () => {
    assert.equal(readFileSync(join(builds, 'current'), 'utf8').trim(), build.split('/').pop());
    assert.equal(freshBuild(join(ROOT, 'src'), builds), join(build, 'main.js'));
  });

  it('prints the version', async () => {
    const { stdout } = await execute(process.execPath, [join(build, 'main.js'), '--version']);
    assert.equal(stdout.trim(), VERSION);
  });

  it('serves the API and the console from the build, without a TypeScript loader', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-build-serve-'));
    const record = join(dir, 'modules');
    writeFileSync(record, '');
    const child = spawn(process.execPath, ['--import', RECORDER, join(build, 'main.js'), '--database', `sqlite:${join(dir, 'store.db')}`, 'serve', '--host', '127.0.0.1', '--port', '0'], {
      env: { ...process.env, LOG_LEVEL: 'warn', RECORD_MODULES_FILE: record, ADMIN_TOKEN: 'test-admin-token-0123456789abcdefghij' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: string) => {
        stdout += d;
        const found = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stdout}`)));
    });
    const health = await fetch(`${url}/readyz`);
    assert.equal(health.status, 200);
    const signIn = await fetch(`${url}/admin/sign-in`);
    assert.equal(signIn.status, 200);
    const css = /href="(\/admin\/static\/[^"]+\.css)"/.exec(await signIn.text())?.[1];
    assert.ok(css, 'the sign-in page links its stylesheet');
    const sheet = await fetch(`${url}${css}`);
    assert.equal(sheet.status, 200, 'the console serves its static files from the build');
    const modules = readFileSync(record, 'utf8');
    assert.match(modules, /\/node_modules\/fastify\//);
    assert.doesNotMatch(modules, /\/node_modules\/tsx\//, 'no TypeScript loader');
  });
});
