import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SnapshotRunner } from '../../src/snapshots/runner.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { sleep } from '../helpers/wait.ts';
import { runnerOf } from '../snapshots/helpers.ts';
import { callError, callOk, connect, listen } from './client.ts';

interface Job {
  id: number;
  status: string;
  rows: number;
  seq: number | null;
  downloadUrl?: string;
}

for (const dialect of await dialects()) {
  describe(`snapshot tools (${dialect})`, () => {
    let t: TestApp;
    let runner: SnapshotRunner;
    let client: Client;
    let token: string;
    let base: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 120, seed: 5 }, env: { SNAPSHOT_POLL_MS: '50' } });
      runner = runnerOf(t);
      runner.start();
      token = (await t.credential(['products:read', 'changes:read'])).token;
      base = await listen(t);
      client = await connect(base, token);
    });
    after(async () => {
      await client.close();
      await runner.stop();
      await t.close();
    });

    it('create_snapshot, then get_snapshot until completed: the file holds what the listing holds, and its seq continues in list_changes', async () => {
      const created = (await callOk(client, 'create_snapshot', { collection: 'products', filters: { status: 'active' }, fields: ['name', 'price'] })) as unknown as Job;
      assert.equal(created.status, 'queued');
      // The REST API shows the same job (the runner may have started it already).
      const viaRest = (await t.get(`/api/v2/snapshots/${created.id}`, token)).json() as { collection: string; filters: unknown; fields: unknown };
      assert.deepEqual([viaRest.collection, viaRest.filters, viaRest.fields], ['products', { status: 'active' }, ['id', 'name', 'price']]);
      let job = created;
      for (let i = 0; i < 400 && job.status !== 'completed' && job.status !== 'failed'; i++) {
        await sleep(50);
        job = (await callOk(client, 'get_snapshot', { id: created.id })) as unknown as Job;
      }
      assert.equal(job.status, 'completed');
      // The signed URL is on the store's public address; the test's server is that store on loopback.
      const signed = new URL(job.downloadUrl!);
      assert.equal(signed.origin, 'http://store.test');
      const file = await fetch(`${base}${signed.pathname}${signed.search}`);
      assert.equal(file.status, 200);
      const items = gunzipSync(Buffer.from(await file.arrayBuffer())).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const listed = (await t.get('/api/v2/products?status=active&fields=name,price&limit=1000', token)).json().data as Array<Record<string, unknown>>;
      assert.equal(items.length, job.rows);
      assert.deepEqual(items, listed);
      // The job's own completion is in the feed after its seq, for this credential, as on the REST feed.
      const changes = await callOk(client, 'list_changes', { after: job.seq, limit: 100 });
      assert.deepEqual(changes, (await t.get(`/api/v2/changes?after=${job.seq}&limit=100`, token)).json());
      assert.ok((changes.data as Array<{ type: string; resourceId: number }>).some((e) => e.type === 'snapshot.completed' && e.resourceId === job.id));
    });

    it('refuses bad input at once and another credential\'s job, as tool errors', async () => {
      assert.equal((await callError(client, 'create_snapshot', { collection: 'products', filters: { status: 'bogus' } })).code, 'invalid_parameter');
      assert.equal((await callError(client, 'create_snapshot', { collection: 'products', fields: ['nope'] })).code, 'invalid_parameter');
      assert.equal((await callError(client, 'create_snapshot', { collection: 'orders' })).code, 'insufficient_scope');
      assert.equal((await callError(client, 'create_snapshot', { collection: 'widgets' })).code, 'invalid_parameter');
      const mine = (await callOk(client, 'create_snapshot', { collection: 'products' })) as unknown as Job;
      const other = await connect(base, (await t.credential(['products:read'])).token);
      assert.equal((await callError(other, 'get_snapshot', { id: mine.id })).code, 'not_found');
      await other.close();
    });
  });
}
