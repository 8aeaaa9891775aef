import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { readRange } from '../../src/snapshots/chunks.ts';
import { insertJob } from '../../src/snapshots/jobs.repository.ts';
import { COMPRESSED_PIECE_BYTES } from '../../src/listing/formats/export.ts';
import { produceSnapshot } from '../../src/snapshots/produce.ts';
import type { SnapshotRunner } from '../../src/snapshots/runner.ts';
import { signedFileUrl } from '../../src/snapshots/snapshots.service.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';
import type { Readable } from 'node:stream';
import { createJob, downloadItems, finished, listAll, ndjsonItems, runnerOf } from './helpers.ts';

const READ = ['products:read', 'categories:read', 'brands:read', 'product-parameters:read', 'product-filters:read', 'orders:read', 'changes:read'] as const;

async function text(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

for (const dialect of await dialects()) {
  describe(`snapshots (${dialect})`, () => {
    let t: TestApp;
    let runner: SnapshotRunner;
    let token: string;
    let base: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 2500, orders: 40, seed: 13 }, env: { SNAPSHOT_POLL_MS: '50' } });
      token = (await t.credential([...READ])).token;
      runner = runnerOf(t);
      runner.start();
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await runner.stop();
      await t.close();
    });

    it('an NDJSON snapshot of products equals the JSON listing item by item, at the feed head', async () => {
      const head = (await t.get('/api/v2/changes/head', token)).json() as { seq: number };
      const created = await createJob(t, token, { collection: 'products', format: 'ndjson' });
      assert.equal(created.status, 'queued');
      const job = await finished(t, token, created.id);
      assert.equal(job.status, 'completed', job.error ?? '');
      assert.equal(job.seq, head.seq);
      const items = await downloadItems(t, token, job.id);
      const listed = await listAll(t, token, 'products');
      assert.equal(items.length, 2500);
      assert.equal(job.rows, 2500);
      assert.deepEqual(items, listed);
      // The file was given to gzip in more than one input (see COMPRESSED_PIECE_BYTES), so their seams are checked too.
      assert.ok(JSON.stringify(items).length > COMPRESSED_PIECE_BYTES);
    });

    it('orders with their items, filtered and kept to some fields; CSV and XLSX complete too', async () => {
      const job = await finished(t, token, (await createJob(t, token, { collection: 'orders', filters: { status: 'paid,new' }, fields: ['number', 'items'] })).id);
      assert.equal(job.status, 'completed', job.error ?? '');
      const listed = (await listAll(t, token, 'orders', '&status=paid,new')).map((o) => ({ id: o.id, number: o.number, items: o.items }));
      assert.deepEqual(await downloadItems(t, token, job.id), listed);
      const csv = await finished(t, token, (await createJob(t, token, { collection: 'product-parameters', format: 'csv' })).id);
      const file = await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${csv.id}/file`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(file.headers['content-type'], 'application/gzip');
      assert.equal(file.headers['content-encoding'], undefined);
      assert.match(String(file.headers['content-disposition']), /filename="product-parameters-\d{4}-\d\d-\d\d\.csv\.gz"/);
      const lines = gunzipSync(file.rawPayload).toString('utf8').trimEnd().split('\r\n');
      assert.equal(lines.length, csv.rows + 1);
      const xlsx = await finished(t, token, (await createJob(t, token, { collection: 'brands', format: 'xlsx' })).id);
      const book = await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${xlsx.id}/file`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(book.rawPayload.subarray(0, 2).toString(), 'PK');
      assert.equal(createHash('sha256').update(book.rawPayload).digest('hex'), xlsx.sha256);
    });

    it('writes made while the snapshot is read are not in it, and are in the feed after its seq', async () => {
      // Produced by hand (not by the runner) so that the writes land between two batches of this very file.
      await runner.stop();
      const job = await insertJob(t.ctx.store.db, { credentialId: 0, collection: 'products', format: 'ndjson', filters: {}, fields: null }, new Date().toISOString());
      const pending: Array<Promise<{ statusCode: number }>> = [];
      let rowsBeforeWrites = 0;
      const produced = await produceSnapshot(t.ctx.store, t.ctx.resources.byCollection.get('products')!, job, t.ctx.hashKey, new AbortController().signal, async (rows) => {
        // After the first batch (a few rows): products 2400 and 2401 are still to be read. No more bytes are
        // taken from the export until the writes have committed, so its reader soon waits too.
        if (pending.length > 0) return;
        rowsBeforeWrites = rows;
        pending.push(t.admin('PATCH', '/admin/api/products/2400', { name: 'Renamed during the snapshot' }), t.admin('DELETE', '/admin/api/products/2401'));
        await Promise.all(pending);
      });
      assert.ok(rowsBeforeWrites < 2400, `the writes came after ${rowsBeforeWrites} rows`);
      const answers = await Promise.all(pending);
      assert.deepEqual(answers.map((a) => a.statusCode), [200, 204]);
      // Read before the runner is back: the job is still queued (it was never claimed), so a runner would take it,
      // produce it again and remove this run's pieces first.
      let items: Array<Record<string, unknown>>;
      try {
        items = ndjsonItems(await text(readRange(t.ctx.store.db, job.id, 0, produced.size - 1)));
      } finally {
        runner = runnerOf(t);
        runner.start();
      }
      assert.equal(items.length, 2500);
      const p2400 = items.find((i) => i.id === 2400)!;
      assert.notEqual(p2400.name, 'Renamed during the snapshot');
      assert.ok(items.some((i) => i.id === 2401));
      const events = ((await t.get(`/api/v2/changes?after=${produced.seq}&limit=1000`, token)).json() as { data: Array<{ type: string; resourceId: number; data: { name?: string } }> }).data;
      assert.ok(events.some((e) => e.type === 'product.updated' && e.resourceId === 2400 && e.data.name === 'Renamed during the snapshot'));
      assert.ok(events.some((e) => e.type === 'product.deleted' && e.resourceId === 2401));
      // And nothing of the file's view is after its seq: the head then was the file's seq.
      assert.ok(events.every((e) => e.type.startsWith('product') || e.type.startsWith('product-')));
    });

    it('the signed URL downloads without a header over a real server, and fails when altered or expired; Range resumes', async () => {
      const job = await finished(t, token, (await createJob(t, token, { collection: 'product-filters' })).id);
      const url = new URL(job.downloadUrl!);
      const local = `${base}${url.pathname}${url.search}`;
      const whole = await fetch(local);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.equal(whole.headers.get('etag'), `"${job.sha256}"`);
      const bytes = Buffer.from(await whole.arrayBuffer());
      assert.equal(bytes.length, job.size);
      assert.equal(Number(whole.headers.get('content-length')), job.size);
      assert.equal(ndjsonItems(bytes).length, job.rows);

      const part = await fetch(local, { headers: { range: `bytes=${bytes.length - 1000}-` } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes ${bytes.length - 1000}-${bytes.length - 1}/${bytes.length}`);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(bytes.length - 1000));
      const beyond = await fetch(local, { headers: { range: `bytes=${bytes.length}-` } });
      assert.equal(beyond.status, 416);
      assert.equal(beyond.headers.get('content-range'), `bytes */${bytes.length}`);

      const altered = new URL(local);
      altered.searchParams.set('expires', String(Number(altered.searchParams.get('expires')) + 1));
      assert.equal((await fetch(altered)).status, 403);
      const otherJob = new URL(local.replace(`/snapshots/${job.id}/`, `/snapshots/${job.id + 1}/`));
      assert.equal((await fetch(otherJob)).status, 403);
      const expired = new URL(signedFileUrl(base, t.ctx.hashKey, job.id, Math.floor(Date.now() / 1000) - 1));
      assert.equal((await fetch(expired)).status, 403);
      const noHeader = await fetch(`${base}/api/v2/snapshots/${job.id}/file`);
      assert.equal(noHeader.status, 401);
    });

    it('a token without the collection\'s scope gets 403; another credential sees 404 for the job and not its events', async () => {
      const categoriesOnly = (await t.credential(['categories:read', 'changes:read'])).token;
      const refused = await t.app.inject({ method: 'POST', url: '/api/v2/snapshots', headers: { authorization: `Bearer ${categoriesOnly}` }, payload: { collection: 'products' } });
      problemOf(refused, 403, 'insufficient_scope');
      assert.match(String(refused.headers['www-authenticate']), /scope="products:read"/);
      const bad = await t.app.inject({ method: 'POST', url: '/api/v2/snapshots', headers: { authorization: `Bearer ${token}` }, payload: { collection: 'products', filters: { status: 'sold' } } });
      problemOf(bad, 400, 'invalid_parameter');
      const badField = await t.app.inject({ method: 'POST', url: '/api/v2/snapshots', headers: { authorization: `Bearer ${token}` }, payload: { collection: 'products', fields: ['nope'] } });
      problemOf(badField, 400, 'invalid_parameter');

      const mine = await finished(t, token, (await createJob(t, token, { collection: 'brands' })).id);
      const other = (await t.credential([...READ])).token;
      problemOf(await t.get(`/api/v2/snapshots/${mine.id}`, other), 404, 'not_found');
      problemOf(await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${mine.id}/file`, headers: { authorization: `Bearer ${other}` } }), 404, 'not_found');
      const seen = async (tok: string) => ((await t.get(`/api/v2/changes?after=${mine.seq}&limit=1000`, tok)).json() as { data: Array<{ type: string; resourceId: number }> }).data;
      assert.ok((await seen(token)).some((e) => e.type === 'snapshot.completed' && e.resourceId === mine.id));
      assert.ok(!(await seen(other)).some((e) => e.type.startsWith('snapshot.')));
      const listed = (await t.get('/api/v2/snapshots?limit=2', token)).json() as { data: Array<{ id: number }>; pagination: { hasMore: boolean } };
      assert.equal(listed.data.length, 2);
      assert.ok(listed.pagination.hasMore);
      assert.equal(((await t.get('/api/v2/snapshots', other)).json() as { data: unknown[] }).data.length, 0);
    });

    it('DELETE removes a finished job with its file', async () => {
      const job = await finished(t, token, (await createJob(t, token, { collection: 'categories' })).id);
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v2/snapshots/${job.id}`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 204);
      problemOf(await t.get(`/api/v2/snapshots/${job.id}`, token), 404, 'not_found');
      assert.equal((await fetch(new URL(new URL(job.downloadUrl!).pathname + new URL(job.downloadUrl!).search, base))).status, 404);
    });
  });
}
