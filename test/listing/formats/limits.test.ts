import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openStore, type Store } from '../../../src/db/database.ts';
import { plan } from '../../../src/listing/engine.ts';
import { exportStats } from '../../../src/listing/formats/export.ts';
import { exportAll, type ExportOptions } from '../../../src/listing/formats/send.ts';
import { AppError } from '../../../src/errors/app-error.ts';
import { products } from '../../../src/modules/products/resource.ts';
import { seedStore } from '../../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../helpers/databases.ts';

const limits = { perNode: 3, perCredential: 2, idleTimeoutMs: 60_000 };
const options = (owner: string): ExportOptions => ({ format: 'csv', csv: { delimiter: ',', bom: false, escapeFormulas: true }, log: pino({ level: 'silent' }), limits, owner });
const refused = (status: number, code: string) => (err: unknown) =>
  err instanceof AppError && err.status === status && err.code === code && err.headers['retry-after'] === '5';

async function stopped(stream: Readable): Promise<void> {
  const open = exportStats.open;
  stream.destroy();
  for (let i = 0; i < 250 && exportStats.open >= open; i++) await new Promise((r) => setTimeout(r, 20));
}

for (const dialect of await dialects()) {
  describe(`concurrent whole exports (${dialect})`, () => {
    let database: TestDatabase;
    let store: Store;

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: 30 });
      // 3 MB of CSV: more than the response buffer, so an export nobody reads stays running.
      await database.store.db.updateTable('products').set({ description: 'A long description of a product. '.repeat(3000) }).execute();
      // A pool of 4 clients: at most 2 whole exports at once, the other half stays for the API.
      store = dialect === 'postgres' ? openStore(database.url, { pgPoolSize: 4 }) : database.store;
    });
    after(async () => {
      if (store !== database.store) await store.close();
      await database.drop();
    });

    const start = (owner: string) => exportAll(store, products, plan(products, { filters: {} }, 'test key'), false, 'store-api export limits-test', options(owner));

    it(`caps whole exports per credential (429) and per node (503${dialect === 'postgres' ? ', at most half the pool' : ''}), both with Retry-After, until one ends`, async () => {
      // The node's cap: EXPORTS_PER_NODE (3), and on PostgreSQL half the pool of 4 (2).
      const nodeCap = dialect === 'postgres' ? 2 : 3;
      const a1 = await start('a');
      const a2 = await start('a');
      await assert.rejects(start('a'), refused(429, 'rate_limited'), 'a third of the same credential');
      const b1 = nodeCap > 2 ? await start('b') : undefined;
      await assert.rejects(start('c'), refused(503, 'service_unavailable'), 'the node is full, whoever asks');
      // A place comes back when an export ends: to its credential, and to the node.
      await stopped(a1.stream);
      const a3 = await start('a');
      await assert.rejects(start('a'), refused(429, 'rate_limited'));
      await stopped(a2.stream);
      await stopped(a3.stream);
      if (b1) await stopped(b1.stream);
      // Every place is back: the node's whole share runs again.
      const again = [];
      for (let i = 0; i < nodeCap; i++) again.push(await start(`d${i}`));
      await assert.rejects(start('e'), refused(503, 'service_unavailable'));
      for (const e of again) await stopped(e.stream);
    });
  });
}
