// What a server loads at start: the MCP SDK (and zod, which only it uses) on the first POST /mcp, and the openai
// client only when AI_ENGINE=openai. Together they are about 50 MB of resident code that a server on the defaults
// would carry for nothing (docs/benchmarks.md, "Memory"). The server runs as `npm start` runs it, in a child
// process with a resolve hook (fixtures/record-modules.mjs) that lists every module it loads.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { INITIALIZE, rpc } from './client.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));
const RECORDER = fileURLToPath(new URL('./fixtures/record-modules.mjs', import.meta.url));
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghij';

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: string;
  /** The packages (`zod`, `@modelcontextprotocol/sdk`) the process has loaded so far. */
  packages(): Set<string>;
}

function packagesIn(file: string): Set<string> {
  const names = readFileSync(file, 'utf8').split('\n').map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]);
  return new Set(names.filter((name) => name !== undefined));
}

/** `store-api serve` on a fresh SQLite store, once it has printed all it prints at start (`until` ends that). */
async function serve(dir: string, name: string, args: string[], env: Record<string, string>, until: RegExp): Promise<Started> {
  const record = join(dir, `${name}.modules`);
  writeFileSync(record, '');
  const child = spawn(process.execPath, ['--import', RECORDER, BIN, '--database', `sqlite:${join(dir, `${name}.db`)}`, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { ...process.env, ADMIN_TOKEN, LOG_LEVEL: 'warn', RECORD_MODULES_FILE: record, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: string) => {
      stdout += d;
      if (until.test(stdout)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`store-api serve exited with ${code} before it was ready:\n${stdout}\n${stderr}`)));
  });
  const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
  assert.ok(url, stdout);
  return { child, url, stdout, packages: () => packagesIn(record) };
}

async function stop(started: Started | undefined): Promise<void> {
  if (!started || started.child.exitCode !== null) return;
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
}

describe('modules a server loads at start', () => {
  let dir: string;
  let server: Started | undefined;
  let openai: Started | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-api-modules-'));
  });
  after(async () => {
    await stop(server);
    await stop(openai);
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the MCP SDK on the first POST /mcp, not at start (nor zod, nor the openai client)', async () => {
    // As `npm start` runs it: --demo makes a credential on an empty store and prints its secret last.
    server = await serve(dir, 'default', ['--demo', '--demo-products', '1'], {}, /client secret:\s+\S+\n/);
    const atStart = server.packages();
    assert.ok(atStart.has('fastify'), 'the recorder sees the packages the server loads');
    for (const name of ['@modelcontextprotocol/sdk', 'zod', 'openai']) assert.ok(!atStart.has(name), `${name} is not loaded at start`);

    const clientId = /client id:\s+(\S+)/.exec(server.stdout)?.[1] ?? '';
    const clientSecret = /client secret:\s+(\S+)/.exec(server.stdout)?.[1] ?? '';
    const issued = await fetch(`${server.url}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }) });
    assert.equal(issued.status, 200);
    const { access_token: token } = (await issued.json()) as { access_token: string };
    const res = await rpc(server.url, token, INITIALIZE);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'store-data-api');

    const afterMcp = server.packages();
    assert.ok(afterMcp.has('@modelcontextprotocol/sdk'), 'the first POST /mcp loads the MCP SDK');
    assert.ok(!afterMcp.has('openai'), 'MCP does not load the openai client with the built-in engine');
  });

  it('loads the openai client at start when AI_ENGINE=openai', async () => {
    // The engine is made at start (a misconfiguration stops the server); making it does not contact the server.
    openai = await serve(dir, 'openai', [], { AI_ENGINE: 'openai', AI_MODEL: 'test-model', AI_BASE_URL: 'http://127.0.0.1:9/v1' }, /listening on \S+/);
    const atStart = openai.packages();
    assert.ok(atStart.has('openai'), 'the configured engine loads its client');
    assert.ok(!atStart.has('@modelcontextprotocol/sdk'), 'the MCP SDK still waits for /mcp');
  });
});
