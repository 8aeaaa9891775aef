import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { ExportColumn } from '../../../src/listing/formats/columns.ts';
import { unlessAborted } from '../../../src/listing/formats/export.ts';
import { XlsxExportWriter } from '../../../src/listing/formats/xlsx.ts';

const columns: ExportColumn[] = [
  { name: 'id', type: 'integer', slot: 0 },
  { name: 'name', type: 'string', slot: 1 },
];
const rows = Array.from({ length: 50 }, (_, i) => [i + 1, `Product ${i + 1}`]);

describe('an XLSX export whose client goes away while its package is being closed', () => {
  it('ends without an unhandled rejection, whenever the abort comes', async () => {
    // Seen once under load: the client left while ExcelJS closed the package; its commit went on and called the
    // zip's finalize after the abort, whose rejected promise nobody held, and Node ended the process.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      for (let turns = 0; turns < 40; turns++) {
        const out = new PassThrough();
        out.resume();
        const writer = new XlsxExportWriter(out, 'abort', columns);
        await writer.write(rows, new AbortController().signal);
        const finishing = writer.finish().then(() => 'finished', () => 'failed');
        // The abort after `turns` turns of the event loop (each with its microtasks): from before the sheet is
        // closed to after the package is finalized.
        for (let i = 0; i < turns; i++) await nextTurn();
        writer.abort();
        out.destroy();
        // An abort before the sheet is closed leaves the commit waiting for it for good (the entry is destroyed):
        // settled or not, what matters is that nothing escapes.
        const settled = await Promise.race([finishing, new Promise((r) => setTimeout(r, 100, 'pending'))]);
        assert.ok(['finished', 'failed', 'pending'].includes(settled as string));
      }
      // Rejections are reported after the microtasks of their turn.
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(unhandled.map(String), []);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

describe('unlessAborted', () => {
  it('holds the work it gives up on: a failure after the abort is no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      for (const abortFirst of [true, false]) {
        const abort = new AbortController();
        let fail!: (error: Error) => void;
        const work = new Promise<void>((_, reject) => (fail = reject));
        if (abortFirst) abort.abort(new Error('the client went away'));
        const waiting = unlessAborted(work, abort.signal);
        if (!abortFirst) abort.abort(new Error('the client went away'));
        await assert.rejects(waiting, /the client went away/);
        fail(new Error('archive was aborted'));
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(unhandled.map(String), []);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
