import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { BufferRecycler } from '../../../src/buffer-recycler.ts';
import type { SnapshotRunner } from '../../../src/snapshots/runner.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { createJob, finished, runnerOf } from '../../snapshots/helpers.ts';

// A compressed export writes its text into buffers that its compressor gives back once it has read them
// (buffer-recycler.ts): a buffer written again too soon would put later rows over earlier ones before the
// compressor read them. Here snapshots and compressed responses of several MiB of text, through buffers lent
// again, must be byte for byte the uncompressed export.

/** Runs `work` and returns the buffers recyclers lent meanwhile (their own method wrapped for the while). */
async function lentDuring(work: () => Promise<void>): Promise<Buffer[]> {
  const lent: Buffer[] = [];
  const take = BufferRecycler.prototype.take;
  BufferRecycler.prototype.take = function (this: BufferRecycler, size: number) {
    const buffer = take.call(this, size);
    lent.push(buffer);
    return buffer;
  };
  try {
    await work();
  } finally {
    BufferRecycler.prototype.take = take;
  }
  return lent;
}

function assertLentAgain(lent: Buffer[]): void {
  assert.ok(lent.length >= 3, `${lent.length} buffers lent`);
  assert.ok(new Set(lent).size < lent.length, `some lent again: ${new Set(lent).size} of ${lent.length}`);
}

for (const dialect of await dialects()) {
  describe(`compressed exports written into recycled buffers (${dialect})`, { timeout: 120_000 }, () => {
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

    /** The export as it is sent uncompressed. */
    async function plain(format: 'ndjson' | 'csv'): Promise<Buffer> {
      const res = await t.app.inject({ method: 'GET', url: `/api/v2/product-parameters?format=${format}`, headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-encoding'], undefined);
      assert.ok(res.rawPayload.length > 3 * (1 << 20), `${res.rawPayload.length} bytes: several buffers' worth`);
      return res.rawPayload;
    }

    for (const format of ['ndjson', 'csv'] as const) {
      it(`a ${format} snapshot of every product-parameter value is the streamed export's bytes, written through buffers lent again`, async () => {
        let file: Buffer | undefined;
        const lent = await lentDuring(async () => {
          const created = await createJob(t, token, { collection: 'product-parameters', format });
          const job = await finished(t, token, created.id);
          assert.equal(job.status, 'completed', job.error ?? '');
          const res = await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${job.id}/file`, headers: { authorization: `Bearer ${token}` } });
          assert.equal(res.statusCode, 200);
          file = res.rawPayload;
        });
        assert.ok(gunzipSync(file!).equals(await plain(format)), 'the same bytes');
        assertLentAgain(lent);
      });
    }

    for (const [coding, decompress] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
      it(`a ${coding} response of the NDJSON export is the plain export's bytes, written through buffers lent again`, async () => {
        let body: Buffer | undefined;
        const lent = await lentDuring(async () => {
          const res = await t.app.inject({ method: 'GET', url: '/api/v2/product-parameters?format=ndjson', headers: { authorization: `Bearer ${token}`, 'accept-encoding': coding } });
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['content-encoding'], coding);
          body = res.rawPayload;
        });
        assert.ok(decompress(body!).equals(await plain('ndjson')), 'the same bytes');
        assertLentAgain(lent);
      });
    }
  });
}
