import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import zlib, { brotliDecompressSync, gunzipSync } from 'node:zlib';
import XLSX from 'xlsx';
import { BufferRecycler } from '../../../src/buffer-recycler.ts';
import type { SnapshotRunner } from '../../../src/snapshots/runner.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { createJob, finished, runnerOf } from '../../snapshots/helpers.ts';

// A compressed export writes its text into buffers that its compressor gives back once it has read them
// (buffer-recycler.ts), and so do an uncompressed response, given back by its socket once written, and an XLSX
// export's sheet, given back by the zip's deflate: a buffer written again too soon would put later rows over
// earlier ones before they were read. Here snapshots, compressed responses, plain responses read slowly over a
// real socket and workbooks of several MiB of text, through buffers lent again, must be byte for byte the export
// written through buffers of its own.

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

/** Runs `work` with every recycler lending new buffers, never given back: the export as written without them. */
async function unrecycled<T>(work: () => Promise<T>): Promise<T> {
  const take = BufferRecycler.prototype.take;
  BufferRecycler.prototype.take = (size: number) => Buffer.allocUnsafeSlow(size);
  try {
    return await work();
  } finally {
    BufferRecycler.prototype.take = take;
  }
}

/** Runs `work` and returns the sizes of the pieces the zip's deflate was given meanwhile. */
async function deflatedDuring(work: () => Promise<void>): Promise<number[]> {
  const sizes: number[] = [];
  const transform = zlib.DeflateRaw.prototype._transform;
  zlib.DeflateRaw.prototype._transform = function (this: zlib.DeflateRaw, chunk: Buffer, encoding: BufferEncoding, done: () => void) {
    sizes.push(chunk.length);
    transform.call(this, chunk, encoding, done);
  };
  try {
    await work();
  } finally {
    zlib.DeflateRaw.prototype._transform = transform;
  }
  return sizes;
}

/**
 * A GET over a real socket, read slowly: a pause of 50 ms after each MiB, so that the server's socket fills and its
 * writes complete long after they were made (a response's buffers come back only then).
 */
function readSlowly(url: string, token: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } }, (res) => {
      if (res.statusCode !== 200 || res.headers['content-encoding'] !== undefined) return reject(new Error(`${url}: ${res.statusCode}, content-encoding ${res.headers['content-encoding']}`));
      const chunks: Buffer[] = [];
      let since = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        since += chunk.length;
        if (since < 1 << 20) return;
        since = 0;
        res.pause();
        setTimeout(() => res.resume(), 50);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The sheet's XML in a workbook (the other parts carry the time they were written). */
function sheetXml(body: Buffer): string {
  const entry = XLSX.CFB.find(XLSX.CFB.read(body, { type: 'buffer' }), '/xl/worksheets/sheet1.xml');
  assert.ok(entry, 'a sheet');
  return Buffer.from(entry.content as Uint8Array).toString('utf8');
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
    /** The app's address on loopback, once it listens. */
    let listening: Promise<string> | undefined;

    before(async () => {
      // About 40 000 product-parameter values: some 7 MB of NDJSON and 3.5 MB of CSV, through buffers of 1 MiB;
      // their sheet, about 9 MB of XML.
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

    for (const format of ['ndjson', 'csv'] as const) {
      it(`a plain ${format} response over a socket, read slowly, is the export's bytes, written through buffers the socket gave back`, async () => {
        const base = await (listening ??= t.app.listen({ host: '127.0.0.1', port: 0 }));
        let body: Buffer | undefined;
        const lent = await lentDuring(async () => {
          body = await readSlowly(`${base}/api/v2/product-parameters?format=${format}`, token);
        });
        assert.ok(body!.equals(await plain(format)), 'the same bytes');
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

    it('an XLSX export is the sheet written through buffers of its own, written through buffers lent again, and deflated in pieces of about a MiB', async () => {
      const get = async () => {
        const res = await t.app.inject({ method: 'GET', url: '/api/v2/product-parameters?format=xlsx', headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } });
        assert.equal(res.statusCode, 200);
        return res.rawPayload;
      };
      let body: Buffer | undefined;
      let deflated: number[] = [];
      const lent = await lentDuring(async () => {
        deflated = await deflatedDuring(async () => {
          body = await get();
        });
      });
      const own = sheetXml(await unrecycled(get));
      assert.ok(own.length > 5 * (1 << 20), `${own.length} characters of sheet XML: several buffers' worth`);
      assert.ok(sheetXml(body!) === own, 'the same sheet');
      assertLentAgain(lent);
      // PostgreSQL's rows come a socket read at a time (some 100 kB of XML each): the deflate is given them joined
      // (xlsx.ts, XlsxExportWriter's `put`), not one piece each, which cost it a wait on the main thread for each.
      const sheet = deflated.filter((n) => n >= 64 << 10);
      const bytes = sheet.reduce((a, b) => a + b, 0);
      assert.ok(bytes >= Buffer.byteLength(own) * 0.9, `the sheet went to the deflate in pieces of at least 64 kB (${bytes} bytes)`);
      assert.ok(sheet.length <= Math.ceil(bytes / (1 << 20)) + 3, `${sheet.length} pieces for ${bytes} bytes`);
    });
  });
}
