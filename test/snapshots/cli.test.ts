import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { dialects } from '../helpers/databases.ts';
import { listAll, startInstance, type Instance } from '../sync/cluster.ts';

/** `store-api …` as a user runs it; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/store-api.js', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

// The CLI talks to a running store only; one dialect shows it.
for (const dialect of (await dialects()).slice(0, 1)) {
  describe(`store-api snapshots (${dialect})`, () => {
    let store: Instance;
    let env: Record<string, string>;
    let dir: string;

    before(async () => {
      store = await startInstance(dialect, { seed: 150, env: { SNAPSHOT_POLL_MS: '50' } });
      env = { STORE_URL: store.url, STORE_CLIENT_ID: store.follower.clientId, STORE_CLIENT_SECRET: store.follower.clientSecret };
      dir = mkdtempSync(join(tmpdir(), 'snapshots-cli-'));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await store?.close();
    });

    it('create --wait --output, list, get, and download resuming a partial file', async () => {
      const file = join(dir, 'products.ndjson.gz');
      const created = await cli(['snapshots', 'create', '--collection', 'products', '--filter', 'status=active', '--wait', '--output', file, '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const job = JSON.parse(created.stdout) as { id: number; status: string; rows: number; size: number };
      assert.equal(job.status, 'completed');
      const items = gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { status: string });
      assert.equal(items.length, job.rows);
      assert.ok(items.every((i) => i.status === 'active'));

      const listed = await cli(['snapshots', 'list'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`snapshot ${job.id}: completed`));
      const got = await cli(['snapshots', 'get', String(job.id)], env);
      assert.match(got.stdout, /\/api\/v2\/snapshots\/\d+\/file\?expires=\d+&signature=/);

      // A download broken off after 100 bytes is resumed from there, and the file is whole.
      const whole = readFileSync(file);
      const partial = join(dir, 'partial.ndjson.gz');
      writeFileSync(partial, whole.subarray(0, 100));
      const resumed = await cli(['snapshots', 'download', String(job.id), '--output', partial, '--json'], env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal((JSON.parse(resumed.stdout) as { bytes: number }).bytes, whole.length - 100);
      assert.deepEqual(readFileSync(partial), whole);
      truncateSync(partial, 0);
      assert.equal((await cli(['snapshots', 'download', String(job.id), '--output', partial], env)).code, 0);
      assert.deepEqual(readFileSync(partial), whole);
      assert.ok((await listAll(store, 'products')).length >= items.length);
    });

    it('fails with one line naming what is missing', async () => {
      const res = await cli(['snapshots', 'list'], { STORE_URL: store.url, STORE_CLIENT_ID: '', STORE_CLIENT_SECRET: '' });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /^store-api: snapshots needs --client-id/);
    });
  });
}
