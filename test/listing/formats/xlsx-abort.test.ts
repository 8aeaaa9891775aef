import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { ExportColumn } from '../../../src/listing/formats/columns.ts';
import { exportStats, unlessAborted } from '../../../src/listing/formats/export.ts';
import { XlsxExportWriter } from '../../../src/listing/formats/xlsx.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { until } from '../../helpers/wait.ts';

const columns: ExportColumn[] = [
  { name: 'id', type: 'integer', slot: 0 },
  { name: 'name', type: 'string', slot: 1 },
];
const rows = Array.from({ length: 50 }, (_, i) => [i + 1, `Product ${i + 1}`]);

/**
 * Runs `work`, then fails if any promise was rejected without a handler meanwhile (what Node ends the process
 * for). Rejections are reported after the microtasks of their turn: hence the pause before looking.
 */
async function withoutUnhandledRejections(work: () => Promise<void>): Promise<void> {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', record);
  try {
    await work();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled.map(String), []);
  } finally {
    process.off('unhandledRejection', record);
  }
}

describe('an XLSX export whose client goes away while its package is being closed', () => {
  it('ends without an unhandled rejection, whenever the abort comes', async () => {
    // Seen once under load: the client left while ExcelJS closed the package; its commit went on and called the
    // zip's finalize after the abort, whose rejected promise nobody held, and Node ended the process.
    await withoutUnhandledRejections(async () => {
      for (let turns = 0; turns < 40; turns++) {
        const out = new PassThrough();
        out.resume();
        const writer = new XlsxExportWriter(out, 'abort', columns);
        await writer.write(rows, new AbortController().signal);
        const finishing = writer.finish().catch(() => undefined);
        // The abort after `turns` turns of the event loop (each with its microtasks): from before the sheet is
        // closed to after the package is finalized.
        for (let i = 0; i < turns; i++) await nextTurn();
        writer.abort();
        out.destroy();
        // Time for the closing to go on after the abort. Aborted before the sheet was closed, it waits for good
        // (the entry is destroyed): settled or not, nothing may escape it.
        await Promise.race([finishing, new Promise((r) => setTimeout(r, 100))]);
      }
    });
  });
});

describe('unlessAborted', () => {
  it('holds the work it gives up on: a failure after the abort is no unhandled rejection', async () => {
    await withoutUnhandledRejections(async () => {
      for (const abortFirst of [true, false]) {
        const abort = new AbortController();
        let fail!: (error: Error) => void;
        const work = new Promise<void>((_, reject) => (fail = reject));
        if (abortFirst) abort.abort(new Error('the client went away'));
        const waiting = unlessAborted(work, abort.signal);
        if (!abortFirst) abort.abort(new Error('the client went away'));
        await assert.rejects(waiting, /the client went away/);
        fail(new Error('archive was aborted'));
      }
    });
  });
});

/** A GET whose client hangs up `afterMs` after the first bytes of the answer came. */
function hangUp(port: number, path: string, token: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      res.once('data', () => setTimeout(() => req.destroy(), afterMs));
      res.on('data', () => undefined);
      res.once('end', resolve);
      res.once('close', resolve);
    });
    req.once('error', () => resolve());
    req.once('close', () => resolve());
  });
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`XLSX exports whose clients hang up at many points (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let port: number;
    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 300, orders: 40, seed: 3 } });
      token = (await t.credential(['products:read', 'orders:read'])).token;
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => t.close());

    it('the server goes on answering, and every export ends', async () => {
      // Small workbooks, so that much of each is the closing of the package, where the client leaves.
      await withoutUnhandledRejections(async () => {
        for (let i = 0; i < 60; i++) {
          await Promise.all([
            hangUp(port, '/api/v2/orders?format=xlsx', token, i % 12),
            hangUp(port, '/api/v2/products?format=xlsx&limit=50', token, (i * 7) % 12),
          ]);
        }
        await until('every export has ended', () => exportStats.open === 0);
      });
      const res = await fetch(`http://127.0.0.1:${port}/api/v2/orders?format=xlsx`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      assert.ok((await res.arrayBuffer()).byteLength > 1000);
    });
  });
}
