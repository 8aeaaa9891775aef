import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { plan } from '../../../src/listing/engine.ts';
import { exportLayout, recordOf } from '../../../src/listing/formats/columns.ts';
import { CSV_DEFAULTS } from '../../../src/listing/formats/csv.ts';
import { COMPRESSED_PIECE_BYTES, runExport, type ExportJob } from '../../../src/listing/formats/export.ts';
import type { ExportRecord } from '../../../src/listing/formats/columns.ts';
import { appRegistry } from '../../../src/modules/registry.ts';

const brands = appRegistry().byCollection.get('brands')!;
const layout = exportLayout(brands, plan(brands, { filters: {} }, 'test').shape);
const silent = { info: () => {}, error: () => {} };
const records = (from: number, n: number): ExportRecord[] =>
  Array.from({ length: n }, (_, i) => recordOf(layout, { id: from + i, name: `Brand ${from + i}`, slug: `brand-${from + i}`, description: 'Žluťoučký kůň '.repeat(20) }));

/** An export of `batches` whose source gives each batch only when `give` is called. */
function slowExport(compressed: boolean, batches: ExportRecord[][]) {
  let waiting: ((batch: ExportRecord[] | undefined) => void) | undefined;
  let asked = 0;
  const job: ExportJob = {
    format: 'csv',
    layout,
    csv: CSV_DEFAULTS,
    log: silent,
    compressed,
    release: async () => {},
    rows: {
      kind: 'records',
      first: batches[0],
      next: () => {
        asked += 1;
        return new Promise((resolve) => (waiting = resolve));
      },
    },
  };
  const out = runExport(job);
  return {
    out,
    asked: () => asked,
    give: () => {
      const w = waiting!;
      waiting = undefined;
      w(batches[asked]);
    },
  };
}

async function whole(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('an export whose bytes go to a compressor', { timeout: 30_000 }, () => {
  it('sends what it holds when its rows come slowly, and writes the same bytes as an uncompressed one', async () => {
    const batches = [records(1, 50), records(51, 50), records(101, 50)];
    const slow = slowExport(true, batches);
    // The first batch is far below a piece: without the flush after HELD_MS it would wait for the next batch
    // (the header goes out first, on its own).
    const seen: Buffer[] = [];
    const rows = () => Buffer.concat(seen).toString().split('\r\n').length - 2;
    while (rows() < 50) seen.push(...((await once(slow.out, 'data')) as [Buffer]));
    const first = Buffer.concat(seen);
    assert.match(first.toString(), /^id,/);
    assert.equal(rows(), 50, 'the whole first batch, and nothing after it');
    assert.equal(slow.asked(), 1, 'sent while its next batch was still being read');
    const rest = whole(slow.out);
    slow.give();
    await new Promise((r) => setTimeout(r, 10));
    slow.give();
    await new Promise((r) => setTimeout(r, 10));
    slow.give();
    const compressed = Buffer.concat([first, await rest]);

    const plain = slowExport(false, batches);
    const plainBytes = whole(plain.out);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 10));
      plain.give();
    }
    assert.ok(compressed.equals(await plainBytes));
    assert.equal(compressed.toString().split('\r\n').length, 152, 'the header, 150 rows and the last line end');
  });

  it('gives the compressor pieces of COMPRESSED_PIECE_BYTES (half of it where a buffer ends), each ending at a whole row', async () => {
    const batches = Array.from({ length: 12 }, (_, i) => records(1 + i * 1000, 1000));
    const slow = slowExport(true, batches);
    const pieces: Buffer[] = [];
    slow.out.on('data', (p: Buffer) => pieces.push(p));
    const ended = once(slow.out, 'end');
    for (let i = 1; i <= batches.length; i++) {
      await new Promise((r) => setImmediate(r));
      slow.give();
    }
    await ended;
    const body = Buffer.concat(pieces).toString();
    assert.equal(body.split('\r\n').length, 12_000 + 2);
    // The header goes first on its own; then whole pieces; the last holds the rest.
    const middle = pieces.slice(1, -1);
    assert.ok(middle.length >= 2, `${pieces.length} pieces`);
    for (const piece of middle) {
      assert.ok(piece.length * 2 >= COMPRESSED_PIECE_BYTES && piece.length < 2 * COMPRESSED_PIECE_BYTES, `${piece.length}`);
      assert.equal(piece.subarray(-2).toString(), '\r\n');
    }
    const whole = middle.filter((p) => p.length >= COMPRESSED_PIECE_BYTES).length;
    assert.ok(whole * 2 >= middle.length, `${whole} of ${middle.length} pieces of COMPRESSED_PIECE_BYTES or more: ${middle.map((p) => p.length).join(' ')}`);
  });
});
