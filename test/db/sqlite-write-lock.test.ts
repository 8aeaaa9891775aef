import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import type { Scope } from '../../src/auth/scopes.ts';
import { inTransaction } from '../../src/events/transaction.ts';
import { products } from '../../src/modules/products/resource.ts';
import { updateItem } from '../../src/resources/writer.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));

/**
 * SQLite has one writer per file. A second process writing (store-api import beside the server) must make
 * this one's writers wait, not fail, and must not stop its reads; and the import itself must get its turn.
 */
describe('SQLite writers queue behind another process (sqlite)', () => {
  let t: TestApp;
  let path: string;
  let token: string;
  const dir = mkdtempSync(join(tmpdir(), 'store-api-lock-'));

  before(async () => {
    t = await createTestApp('sqlite', { seed: { products: 6, orders: 0, seed: 5 } });
    path = t.database.store.sqlitePath!;
    token = (await t.credential(['products:read' as Scope])).token;
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another connection to the file that takes the write lock and keeps it until released. */
  function holdWriteLock(): { release(): void } {
    const other = new SQLite(path);
    other.exec('begin immediate');
    other.prepare('update products set stock = stock + 1 where id = 1').run();
    return { release: () => { other.exec('commit'); other.close(); } };
  }

  it('a write transaction waits for the lock before it begins (no 503) while reads go on', async () => {
    const lock = holdWriteLock();
    // The work of a transaction starts once BEGIN has returned: with BEGIN IMMEDIATE, only when this process
    // holds the write lock. (A deferred BEGIN returns at once and fails later, at the first write.)
    let began = false;
    const write = inTransaction(t.ctx.store, t.ctx.bus, (w) => {
      began = true;
      return updateItem(w, t.ctx.resources, products, 2, { stock: 41 });
    });
    // Reads are answered while the write is queued: the process is not blocked and the connection is free.
    for (let i = 0; i < 3; i++) {
      const read = await t.get('/api/v2/products/2', token);
      assert.equal(read.statusCode, 200);
      assert.equal(began, false, 'the write cannot begin while another process holds the write lock');
    }
    lock.release();
    assert.equal((await write).stock, 41);
    // And through HTTP, once the file is free again.
    const res = await t.admin('PATCH', '/admin/api/products/2', { stock: 42 });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('store-api import in a process of its own succeeds beside writes, and the writes all succeed', async () => {
    const file = join(dir, 'products.jsonl');
    writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ articleNumber: `LOCK-${i}`, name: `Lock test ${i}`, price: '5.00', currency: 'CZK', vatRate: 21, description: 'x'.repeat(200) })).join('\n') + '\n');
    const child = spawn(process.execPath, [BIN, '--database', `sqlite:${path}`, 'import', file, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let running = true;
    void exited.then(() => (running = false));

    // Admin writes, one after another, for as long as the import runs (at most 2000: the test ends by itself).
    const statuses: number[] = [];
    for (let i = 0; running && i < 2000; i++) {
      const res = await t.admin('PATCH', `/admin/api/products/${1 + (i % 6)}`, { stock: i });
      statuses.push(res.statusCode);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const code = await exited;
    assert.equal(code, 0, stderr);
    assert.equal(JSON.parse(stdout).created, 3000);
    assert.ok(statuses.length > 0);
    assert.deepEqual([...new Set(statuses)], [200], `every write succeeds (${statuses.length} made)`);
    const count = await t.database.store.db.selectFrom('products').select((eb) => eb.fn.countAll<number>().as('n')).where('article_number', 'like', 'LOCK-%').executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 3000);
  });
});
