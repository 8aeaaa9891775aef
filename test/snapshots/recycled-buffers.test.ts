import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { BufferRecycler } from '../../src/listing/formats/bytes.ts';
import type { SnapshotRunner } from '../../src/snapshots/runner.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { createJob, finished, runnerOf } from './helpers.ts';

// A snapshot writes its text into buffers that gzip gives back once it has read them (bytes.ts, BufferRecycler):
// a buffer written again too soon would put later rows over earlier ones before gzip read them. Here a snapshot
// of several MiB of text, through the buffers lent again, must be byte for byte the streamed export.

for (const dialect of await dialects()) {
  describe(`snapshots written into recycled buffers (${dialect})`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let runner: SnapshotRunner;
    let token: string;

    before(async () => {
      // About 40 000 product-parameter values: some 7 MB of NDJSON and 3.5 MB of CSV, through buffers of 1 MiB.
      t = await createTestApp(dialect, { seed: { products: 9000, orders: 0, seed: 17 }, env: { SNAPSHOT_POLL_MS: '50' } });
      token = (await t.credential(['product-parameters:read', 'products:read'])).token;
      runner = runnerOf(t);
      runner.start();
    });
    after(async () => {
      await runner.stop();
      await t.close();
    });

    for (const format of ['ndjson', 'csv'] as const) {
      it(`a ${format} snapshot of every product-parameter value is the streamed export's bytes, written through buffers lent again`, async () => {
        // Which buffers the recycler lends, counted by wrapping its own method for this snapshot.
        const lent: Buffer[] = [];
        const take = BufferRecycler.prototype.take;
        BufferRecycler.prototype.take = function (this: BufferRecycler, size: number) {
          const buffer = take.call(this, size);
          lent.push(buffer);
          return buffer;
        };
        try {
          const created = await createJob(t, token, { collection: 'product-parameters', format });
          const job = await finished(t, token, created.id);
          assert.equal(job.status, 'completed', job.error ?? '');
          const file = await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${job.id}/file`, headers: { authorization: `Bearer ${token}` } });
          assert.equal(file.statusCode, 200);
          const streamed = await t.app.inject({ method: 'GET', url: `/api/v2/product-parameters?format=${format}`, headers: { authorization: `Bearer ${token}` } });
          assert.equal(streamed.statusCode, 200);
          const text = gunzipSync(file.rawPayload);
          assert.ok(text.length > 3 * (1 << 20), `${text.length} bytes: several buffers' worth`);
          assert.ok(text.equals(streamed.rawPayload), 'the same bytes');
        } finally {
          BufferRecycler.prototype.take = take;
        }
        const distinct = new Set(lent);
        assert.ok(lent.length >= 3, `${lent.length} buffers lent`);
        assert.ok(distinct.size < lent.length, `some lent again: ${distinct.size} of ${lent.length}`);
      });
    }
  });
}
