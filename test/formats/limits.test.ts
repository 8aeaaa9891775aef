import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openStore, type Store } from '../../src/db/database.ts';
import { plan } from '../../src/listing/engine.ts';
import { exportStats } from '../../src/listing/formats/export.ts';
import { exportAll, type ExportOptions } from '../../src/listing/formats/send.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { products } from '../../src/modules/products/resource.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const options: ExportOptions = { format: 'csv', csv: { delimiter: ',', bom: false, escapeFormulas: true }, log: pino({ level: 'silent' }) };

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

    const start = () => exportAll(store, products, plan(products, { filters: {} }, 'test key'), false, 'store-api export limits-test', options);

    it(dialect === 'postgres' ? 'holds at most half the pool; more get 503 with Retry-After until one ends' : 'has no cap: each SQLite export reads through a connection of its own', async () => {
      const first = await start();
      const second = await start();
      if (dialect === 'postgres') {
        await assert.rejects(start(), (err: unknown) => err instanceof AppError && err.status === 503 && err.headers['retry-after'] === '5');
        await stopped(first.stream);
        const third = await start();
        await stopped(third.stream);
      } else {
        const third = await start();
        await stopped(third.stream);
        await stopped(first.stream);
      }
      await stopped(second.stream);
    });
  });
}
