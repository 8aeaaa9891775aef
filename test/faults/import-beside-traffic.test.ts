import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Scope } from '../../src/auth/scopes.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));

const record = (i: number) => JSON.stringify({ articleNumber: `BULK-${i}`, name: `Bulk item ${i}`, description: 'd'.repeat(1000), price: '3.00', currency: 'CZK', vatRate: 21, stock: i }) + '\n';
// More than the import's read-ahead (1 MiB) and the pipe's buffer: once written, the import has consumed
// records, so its transaction is open and holds rows; it then waits for the rest, which the test sends last.
const FIRST = 1800;
const TOTAL = 2000;

/**
 * `store-api import` in a process of its own, fed through a named pipe so that the test decides when it
 * ends: while it is in the middle of its one transaction, the server beside it answers reads, and its writes
 * queue rather than fail. On PostgreSQL they commit before the import does (the import takes the event-order
 * lock only at its end); SQLite has one writer, so they commit right after it. Either way the event log's
 * `seq` order is the commit order.
 */
for (const dialect of await dialects()) {
  describe(`an import beside live traffic (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    const dir = mkdtempSync(join(tmpdir(), 'store-api-bulk-'));

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 8, orders: 0, seed: 11 } });
      token = (await t.credential(['products:read' as Scope])).token;
    });
    after(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reads are answered and writes commit while a 2000-product import is open; seq follows commit order', { timeout: 240_000 }, async () => {
      const fifo = join(dir, 'products.jsonl');
      execFileSync('mkfifo', [fifo]);
      const child = spawn(process.execPath, [BIN, '--database', t.database.url, 'import', fifo, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const pipe = createWriteStream(fifo);
      const send = (from: number, to: number) => new Promise<void>((resolve, reject) => {
        pipe.write(Array.from({ length: to - from }, (_, k) => record(from + k)).join(''), (error) => (error ? reject(error) : resolve()));
      });
      await send(0, FIRST);

      // The import is inside its transaction now, and cannot finish until the rest is sent.
      const write = t.admin('PATCH', '/admin/api/products/1', { stock: 4242 });
      let written = false;
      void write.then(() => (written = true));
      const reads = await Promise.all(Array.from({ length: 20 }, (_, k) => t.get(`/api/v2/products/${1 + (k % 8)}`, token)));
      assert.deepEqual([...new Set(reads.map((r) => r.statusCode))], [200]);
      assert.equal(child.exitCode, null, 'the import is still running');

      if (dialect === 'postgres') {
        // Writes do not wait for the import: many at once, more than the pool has connections, all commit.
        const burst = await Promise.all(Array.from({ length: 24 }, (_, k) => t.admin('PATCH', `/admin/api/products/${2 + (k % 7)}`, { stock: k })));
        assert.deepEqual([...new Set(burst.map((r) => r.statusCode))], [200]);
        assert.equal((await write).statusCode, 200);
        assert.equal(child.exitCode, null, 'the writes committed while the import was still running');
      } else {
        assert.equal(written, false, 'SQLite has one writer: the write waits for the import');
      }

      await send(FIRST, TOTAL);
      pipe.end();
      assert.equal(await exited, 0, stderr);
      const result = JSON.parse(stdout) as { created: number; events: number };
      assert.equal(result.created, TOTAL);
      const answer = await write;
      assert.equal(answer.statusCode, 200, answer.body);

      // seq order is commit order: the write's event is before all of the import's (PostgreSQL) or after them (SQLite).
      const events = await t.database.store.db.selectFrom('events').select(['seq', 'type', 'resource_id', 'data']).where('type', 'like', 'product.%').orderBy('seq').execute();
      const imported = events.filter((e) => JSON.parse(e.data).articleNumber?.startsWith('BULK-'));
      assert.equal(imported.length, result.events);
      assert.deepEqual(imported.map((e) => JSON.parse(e.data).articleNumber), Array.from({ length: TOTAL }, (_, i) => `BULK-${i}`), 'the import\'s events are in the order of its records');
      const mine = events.find((e) => Number(e.resource_id) === 1 && JSON.parse(e.data).stock === 4242);
      assert.ok(mine, 'the write recorded its event');
      if (dialect === 'postgres') assert.ok(Number(mine.seq) < Number(imported[0].seq), 'the write committed first');
      else assert.ok(Number(mine.seq) > Number(imported[imported.length - 1].seq), 'the import committed first');
    });
  });
}
