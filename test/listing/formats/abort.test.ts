import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createCredential } from '../../../src/auth/credentials.service.ts';
import { loadConfig } from '../../../src/config.ts';
import { exportStats } from '../../../src/listing/formats/export.ts';
import { seedStore } from '../../../src/seed/seed.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createTestDatabase, dialects, PG_URL, type TestDatabase } from '../../helpers/databases.ts';
import { sleep, until } from '../../helpers/wait.ts';


/** Opens an export over real HTTP, reads its first chunk, then stops reading (a slow client). */
function stalledDownload(url: string, headers: Record<string, string>): Promise<{ status: number; first: Buffer; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      res.once('data', (chunk: Buffer) => {
        res.pause();
        resolve({ status: res.statusCode ?? 0, first: chunk, destroy: () => req.destroy() });
      });
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
  });
}

for (const dialect of await dialects()) {
  describe(`an export the client abandons (${dialect})`, { timeout: 60_000 }, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let auth: Record<string, string>;
    let pgAdmin: pg.Client | undefined;

    before(async () => {
      database = await createTestDatabase(dialect);
      await seedStore(database.store, { products: 400 });
      // 400 products of ~200 kB each: some 80 MB of CSV, far more than socket buffers hold (a loopback socket's
      // receive buffer grows up to net.ipv4.tcp_rmem's maximum, 32 MB here), so the export is still running when
      // the client stops reading.
      await database.store.db.updateTable('products').set({ description: 'A long description of a product. '.repeat(6000) }).execute();
      const config = loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }, {});
      server = await startServer(config, { store: database.store, logger: false });
      const issued = await createCredential(database.store.db, server.ctx.hashKey, 'abort test', ['products:read', 'brands:read']);
      const token = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret }),
      });
      auth = { authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}` };
      if (dialect === 'postgres') {
        pgAdmin = new pg.Client({ connectionString: PG_URL });
        await pgAdmin.connect();
      }
    });
    after(async () => {
      await pgAdmin?.end();
      await server.stop();
      await database.drop();
    });

    /** Sessions of this export in pg_stat_activity (the export names itself after the request id). */
    const sessions = async (requestId: string): Promise<string[]> =>
      (await pgAdmin!.query<{ state: string; query: string }>('select state, query from pg_stat_activity where application_name = $1', [`store-api export ${requestId}`])).rows.map((r) =>
        r.state === 'active' ? `active: ${r.query.slice(0, 6)}` : r.state,
      );
    /**
     * Whether some reader still holds an old snapshot of the SQLite file: a passive checkpoint then cannot
     * copy every frame of the WAL back. (Open file handles tell nothing: SQLite keeps a closed connection's
     * descriptor while another connection of the process holds locks on the file.)
     */
    const snapshotHeld = async (): Promise<boolean> => {
      const { rows } = await sql<{ log: number; checkpointed: number }>`pragma wal_checkpoint(PASSIVE)`.execute(database.store.db);
      return rows[0].checkpointed < rows[0].log;
    };
    /** Pool clients checked out (the app may keep one for LISTEN; an export must give its own back). */
    const checkedOut = () => database.store.pgPool!.totalCount - database.store.pgPool!.idleCount;

    it('stops reading, and releases its connection, when the client goes away; the app serves others meanwhile', async () => {
      const before = { ...exportStats };
      const clientsBefore = dialect === 'postgres' ? checkedOut() : 0;
      const requestId = `abort-${Date.now()}`;
      const download = await stalledDownload(`${server.url}/api/v2/products?format=csv`, { ...auth, 'x-request-id': requestId });
      assert.equal(download.status, 200);
      assert.match(download.first.toString('utf8'), /^id,articleNumber,/);

      // The export waits for the slow client: it is open, holding its own connection, not the app's.
      await sleep(300);
      assert.equal(exportStats.open, before.open + 1, 'the export is still running while the client does not read');
      const other = await fetch(`${server.url}/api/v2/brands?limit=5`, { headers: auth });
      assert.equal(other.status, 200, 'other requests are served during the export');
      if (dialect === 'sqlite') {
        // A write after the export's snapshot began: the export's read transaction keeps it from being checkpointed.
        await database.store.db.updateTable('brands').set({ description: 'changed during the export' }).where('id', '=', 1).execute();
        assert.equal(await snapshotHeld(), true, 'the export reads one snapshot through a connection of its own');
      } else {
        // PostgreSQL writes the CSV lines of products itself (pg-lines.ts): its COPY waits, blocked on the socket.
        assert.deepEqual(await sessions(requestId), ['active: copy ('], 'the export waits in its COPY for the client');
      }

      download.destroy();
      await until('the export has stopped', () => exportStats.open === before.open);
      assert.equal(exportStats.aborted, before.aborted + 1, 'it ended because the client went away');
      assert.equal(exportStats.completed, before.completed, 'it did not run to the end');
      if (dialect === 'sqlite') assert.equal(await snapshotHeld(), false, 'its connection is closed: no reader holds the old snapshot');
      else {
        // A COPY cannot be stopped: its connection is closed, and the backend ends once it sees that.
        await until('no session of the export is left in pg_stat_activity', async () => (await sessions(requestId)).length === 0);
        // Background work may borrow a pool client for a moment; a client the export kept would never come back.
        await until('its client is back in the pool', () => checkedOut() <= clientsBefore);
      }
    });

    it('an abandoned XLSX export releases its connection too', async () => {
      const before = { ...exportStats };
      const clientsBefore = dialect === 'postgres' ? checkedOut() : 0;
      const download = await stalledDownload(`${server.url}/api/v2/products?format=xlsx`, auth);
      assert.equal(download.status, 200);
      assert.equal(download.first.subarray(0, 2).toString('latin1'), 'PK');
      download.destroy();
      await until('the export has stopped', () => exportStats.open === before.open);
      assert.equal(exportStats.failed, before.failed, 'an abort is not a failure');
      if (dialect === 'postgres') await until('its client is back in the pool', () => checkedOut() <= clientsBefore);
      else assert.equal(await snapshotHeld(), false);
    });
  });
}
