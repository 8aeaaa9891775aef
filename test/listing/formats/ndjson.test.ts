import assert from 'node:assert/strict';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { createCredential } from '../../../src/auth/credentials.service.ts';
import { loadConfig } from '../../../src/config.ts';
import { plan } from '../../../src/listing/engine.ts';
import { openExportConnection } from '../../../src/listing/formats/connection.ts';
import { exportStats } from '../../../src/listing/formats/export.ts';
import { streamExport } from '../../../src/listing/formats/stream.ts';
import { products } from '../../../src/modules/products/resource.ts';
import { seedStore } from '../../../src/seed/seed.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../helpers/databases.ts';
import { until } from '../../helpers/wait.ts';
import { readCsv } from './readers.ts';

const ROWS = 5000;

/** Reads an NDJSON answer line by line as it arrives (never the whole body at once). */
function readLines(url: string, headers: Record<string, string>, onLine: (line: string) => void): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      lines.on('line', onLine);
      lines.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', (err) => (err.message === 'socket hang up' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

for (const dialect of await dialects()) {
  describe(`NDJSON exports (${dialect})`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let auth: Record<string, string>;

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: ROWS, orders: 20 });
      const config = loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }, {});
      server = await startServer(config, { store: database.store, logger: false });
      const issued = await createCredential(database.store.db, server.ctx.hashKey, 'ndjson test', ['products:read', 'orders:read', 'brands:read']);
      const token = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret }),
      });
      auth = { authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}` };
    });
    after(async () => {
      await server.stop();
      await database.drop();
    });

    /** Every item of a listing as the JSON pages give it. */
    async function jsonItems(query: string): Promise<Array<Record<string, unknown>>> {
      const items: Array<Record<string, unknown>> = [];
      let url: string | null = `${server.url}/api/v2/products?limit=1000&${query}`;
      while (url) {
        const body = (await (await fetch(url, { headers: auth })).json()) as { data: Array<Record<string, unknown>>; pagination: { nextCursor: string | null } };
        items.push(...body.data);
        url = body.pagination.nextCursor ? `${server.url}/api/v2/products?limit=1000&cursor=${body.pagination.nextCursor}` : null;
      }
      return items;
    }

    it(`streams every matching row, one JSON item per line, read line by line (${ROWS} products)`, async () => {
      const want = await jsonItems('sort=-updatedAt');
      assert.equal(want.length, ROWS);
      const got: Array<Record<string, unknown>> = [];
      const res = await readLines(`${server.url}/api/v2/products?sort=-updatedAt`, { ...auth, accept: 'application/x-ndjson' }, (line) => {
        got.push(JSON.parse(line) as Record<string, unknown>);
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      assert.match(res.headers['content-disposition'] ?? '', /^attachment; filename="products-\d{4}-\d{2}-\d{2}\.ndjson"$/);
      assert.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, not buffered');
      assert.equal(got.length, ROWS);
      assert.deepEqual(got.map((i) => i.id), want.map((i) => i.id));
      assert.deepEqual(got, want, 'each line is exactly the JSON item');
    });

    it('stops, and lets go of its connection and slot, when the client goes away mid-stream', async () => {
      // Some 50 MB of NDJSON: far more than socket buffers hold, so the export is still running when the client stops reading.
      await database.store.db.updateTable('products').set({ description: 'A long description of a product. '.repeat(300) }).execute();
      const before = { ...exportStats };
      const download = await new Promise<{ first: Buffer; destroy(): void }>((resolve, reject) => {
        const req = http.get(`${server.url}/api/v2/products?format=ndjson`, { headers: auth }, (res) => {
          // Until the first line is whole (chunks end anywhere), then no more reading.
          const chunks: Buffer[] = [];
          const onData = (chunk: Buffer) => {
            chunks.push(chunk);
            if (!chunk.includes(10)) return;
            res.off('data', onData);
            res.pause();
            resolve({ first: Buffer.concat(chunks), destroy: () => req.destroy() });
          };
          res.on('data', onData);
        });
        req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
      });
      assert.equal((JSON.parse(download.first.toString('utf8').split('\n')[0]) as { id: number }).id, 1);
      await until('the export waits for its client', () => exportStats.open === before.open + 1);
      download.destroy();
      await until('the export has stopped', () => exportStats.open === before.open);
      assert.equal(exportStats.aborted, before.aborted + 1, 'it ended because the client went away');
      assert.equal(exportStats.completed, before.completed);
      assert.equal(exportStats.failed, before.failed);
      // Its slot is free: another whole export starts.
      const again = await fetch(`${server.url}/api/v2/products?format=ndjson&ids=1,2,3&fields=name`, { headers: auth });
      assert.equal(again.status, 200);
      assert.equal((await again.text()).trimEnd().split('\n').length, 3);
    });

    it('pages with limit and cursor, with Link; HEAD answers the headers; JSON stays first for */*', async () => {
      const res = await fetch(`${server.url}/api/v2/products?format=ndjson&limit=10&fields=name`, { headers: auth });
      assert.equal(res.status, 200);
      const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(lines.map((l) => Object.keys(l)), Array(10).fill(['id', 'name']));
      assert.match(res.headers.get('link') ?? '', /format=ndjson.*cursor=.*rel="next"/);
      const head = await fetch(`${server.url}/api/v2/products?format=ndjson`, { method: 'HEAD', headers: auth });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
      const any = await fetch(`${server.url}/api/v2/products?limit=1`, { headers: { ...auth, accept: '*/*' } });
      assert.match(any.headers.get('content-type') ?? '', /^application\/json/);
      const orders = await fetch(`${server.url}/api/v2/orders?format=ndjson`, { headers: auth });
      const first = JSON.parse((await orders.text()).split('\n')[0]) as { items: unknown[]; billingAddress: Record<string, unknown> };
      assert.ok(Array.isArray(first.items) && typeof first.billingAddress === 'object', 'nested values are objects, not flattened');
    });

    it('streamExport gives the whole export of a plan in a shape on a caller-owned connection, with no HTTP response', async () => {
      const conn = await openExportConnection(database.store, 'streamExport test');
      try {
        const p = plan(products, { filters: { ids: '1,2,3,4,5' }, sort: '-id' }, server.ctx.hashKey);
        let counted = 0;
        const ndjson = await streamExport(conn, products, p, { fields: ['name'], include: ['brand'] }, { format: 'ndjson', onBatch: (n) => (counted += n) });
        let text = '';
        for await (const chunk of ndjson) text += String(chunk);
        const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { id: number; brand: unknown });
        assert.deepEqual(lines.map((l) => l.id), [5, 4, 3, 2, 1]);
        assert.deepEqual(Object.keys(lines[0]), ['id', 'name', 'brand']);
        assert.equal(counted, 5);
        const csv = await streamExport(conn, products, p, undefined, { format: 'csv', csv: { delimiter: ';' } });
        const chunks: Buffer[] = [];
        for await (const chunk of csv) chunks.push(chunk as Buffer);
        const [header, ...rows] = readCsv(Buffer.concat(chunks), { delimiter: ';' });
        assert.equal(header[1], 'articleNumber');
        assert.equal(rows.length, 5);
      } finally {
        await conn.close();
      }
    });
  });
}
