import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { addCompression, negotiateCoding } from '../../src/http/compression.ts';
import { addConditionalRequests } from '../../src/http/conditional.ts';
import { COMPRESSED_PIECE_BYTES, exportStats } from '../../src/listing/formats/export.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { until } from '../helpers/wait.ts';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came over the wire (still compressed). */
  raw: Buffer;
  /** The bytes decoded as Content-Encoding says. */
  body: Buffer;
}

/** A real HTTP request over loopback, without the automatic decoding of fetch, so that the coding is seen. */
function request(base: string, path: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const coding = res.headers['content-encoding'];
        const body = coding === 'gzip' ? zlib.gunzipSync(raw) : coding === 'br' ? zlib.brotliDecompressSync(raw) : raw;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens an export, reads its first chunk, then reads nothing more (a client that stalls, or is about to leave). */
function stalled(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; first: Buffer; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      res.once('data', (chunk: Buffer) => {
        res.pause();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, first: chunk, destroy: () => req.destroy() });
      });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || err.message === 'socket hang up' ? undefined : reject(err)));
  });
}

describe('Accept-Encoding negotiation', () => {
  it('takes the highest q among br and gzip (x-gzip and * count, br on a tie), identity when nothing acceptable or preferred', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      [undefined, undefined],
      ['', undefined],
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['gzip;q=1, br;q=0.8', 'gzip'],
      ['br;q=0, gzip;q=0.1', 'gzip'],
      ['x-gzip', 'gzip'],
      ['*', 'br'],
      ['*;q=0.5, br;q=0', 'gzip'],
      ['deflate, compress', undefined],
      ['identity', undefined],
      ['gzip;q=0.5, identity', undefined],
      ['gzip;q=0', undefined],
      ['GZIP ; Q=0.7', 'gzip'],
      ['br;q=2', undefined],
      ['br;q=1.5, gzip;q=0.2', 'gzip'],
    ];
    for (const [header, coding] of cases) assert.equal(negotiateCoding(header), coding, String(header));
  });
});

describe('what is never compressed', () => {
  const app = Fastify();
  const big = { text: 'x'.repeat(10_000) };
  before(async () => {
    await app.register(async (scope) => {
      await addCompression(scope);
      addConditionalRequests(scope);
      scope.get('/empty', async (_request, reply) => reply.code(204).send());
      scope.get('/big', async () => big);
      scope.post('/big', async () => big);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => app.close());
  const base = () => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  it('204 and HEAD go uncoded; a large answer to another method is compressed', async () => {
    const empty = await request(base(), '/empty', { 'accept-encoding': 'gzip' });
    assert.equal(empty.status, 204);
    assert.equal(empty.headers['content-encoding'], undefined);
    assert.equal(empty.raw.length, 0);
    const head = await request(base(), '/big', { 'accept-encoding': 'gzip' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], undefined);
    assert.equal(head.headers.vary, 'Accept-Encoding');
    assert.equal(Number(head.headers['content-length']), JSON.stringify(big).length, 'HEAD describes the identity answer');
    const post = await request(base(), '/big', { 'accept-encoding': 'gzip' }, 'POST');
    assert.equal(post.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(post.body.toString()), big);
  });
});

for (const dialect of await dialects()) {
  describe(`compression over HTTP (${dialect})`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let base: string;
    let auth: Record<string, string>;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 300, seed: 5 }, env: { EXPORT_IDLE_TIMEOUT_MS: '1500' } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
      auth = { authorization: `Bearer ${(await t.credential(['products:read', 'brands:read'])).token}` };
    });
    after(() => t.close());

    it('a JSON page in gzip and br decodes to the plain bytes; its tags name the coding; Vary names both negotiations', async () => {
      const url = '/api/v2/products?limit=200';
      const plain = await request(base, url, auth);
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'Accept, Accept-Encoding');
      const tag = String(plain.headers.etag).slice(1, -1);
      for (const [coding, suffix] of [['gzip', '-gz'], ['br', '-br']] as const) {
        const coded = await request(base, url, { ...auth, 'accept-encoding': coding });
        assert.equal(coded.headers['content-encoding'], coding);
        assert.equal(coded.headers.vary, 'Accept, Accept-Encoding');
        assert.equal(coded.headers.etag, `"${tag}${suffix}"`, 'another representation, another strong tag');
        assert.ok(coded.raw.length < plain.raw.length / 4, `${coding}: ${coded.raw.length} of ${plain.raw.length} bytes`);
        assert.ok(coded.body.equals(plain.body), `${coding} decodes to the plain bytes`);
        // A validator of one coding still says the data has not changed, and the 304 names this one.
        const again = await request(base, url, { ...auth, 'accept-encoding': coding, 'if-none-match': String(plain.headers.etag) });
        assert.equal(again.status, 304);
        assert.equal(again.headers.etag, `"${tag}${suffix}"`);
        assert.equal(again.headers['content-encoding'], undefined);
        assert.equal(again.headers.vary, 'Accept, Accept-Encoding');
        assert.equal(again.raw.length, 0);
      }
      const preferred = await request(base, url, { ...auth, 'accept-encoding': 'gzip;q=0.9, br;q=0.5' });
      assert.equal(preferred.headers['content-encoding'], 'gzip', 'q-values decide');
      const refused = await request(base, url, { ...auth, 'accept-encoding': 'compress, identity;q=0.1' });
      assert.equal(refused.headers['content-encoding'], undefined, 'nothing we offer: identity');
    });

    for (const format of ['csv', 'ndjson']) {
      it(`a streamed ${format.toUpperCase()} export in gzip and br decodes to the plain export`, async () => {
        const url = `/api/v2/products?format=${format}`;
        const plain = await request(base, url, auth);
        assert.equal(plain.status, 200);
        assert.equal(plain.headers.vary, 'Accept, Accept-Encoding');
        assert.equal(plain.headers.etag, undefined, 'no body in hand to hash');
        for (const coding of ['gzip', 'br']) {
          const coded = await request(base, url, { ...auth, 'accept-encoding': coding });
          assert.equal(coded.headers['content-encoding'], coding);
          assert.equal(coded.headers['content-length'], undefined, 'streamed: its length is not known ahead');
          assert.ok(coded.raw.length < plain.raw.length / 3);
          assert.ok(coded.body.equals(plain.body), `${coding} decodes to the plain ${format}`);
        }
        if (format === 'ndjson') assert.equal(plain.body.toString().trimEnd().split('\n').length, 300, 'one line a product');
      });
    }

    it('small answers, HEAD, 304, XLSX and no Accept-Encoding go uncoded (Vary says where it could have been)', async () => {
      const small = await request(base, '/api/v2/brands/1', { ...auth, 'accept-encoding': 'gzip, br' });
      assert.equal(small.status, 200);
      assert.ok(small.raw.length < 1024);
      assert.equal(small.headers['content-encoding'], undefined);
      assert.equal(small.headers.vary, 'Accept, Accept-Encoding');
      const head = await request(base, '/api/v2/products?limit=200', { ...auth, 'accept-encoding': 'gzip' }, 'HEAD');
      assert.equal(head.headers['content-encoding'], undefined);
      const headExport = await request(base, '/api/v2/products?format=csv', { ...auth, 'accept-encoding': 'gzip' }, 'HEAD');
      assert.equal(headExport.headers['content-encoding'], undefined);
      const xlsx = await request(base, '/api/v2/products?format=xlsx', { ...auth, 'accept-encoding': 'gzip, br' });
      assert.equal(xlsx.status, 200);
      assert.equal(xlsx.headers['content-encoding'], undefined, 'a workbook is a zip already');
      assert.equal(xlsx.headers.vary, 'Accept');
      assert.equal(xlsx.raw.subarray(0, 2).toString('latin1'), 'PK');
      const none = await request(base, '/api/v2/products?limit=200', auth);
      assert.equal(none.headers['content-encoding'], undefined);
    });

    it('an export of megabytes, given to the compressor a MiB at a time, decodes to the plain export in gzip and br', async () => {
      const text = 'Příliš žluťoučký kůň, "úpěl" ďábelské ódy\n'.repeat(1100);
      const ids = await t.database.store.db.selectFrom('products').select('id').where('id', '<=', 60).execute();
      for (const { id } of ids) await t.database.store.db.updateTable('products').set({ description: `${id} ${text}` }).where('id', '=', id).execute();
      for (const format of ['csv', 'ndjson']) {
        const url = `/api/v2/products?format=${format}`;
        const plain = await request(base, url, auth);
        assert.ok(plain.body.length > 2 * COMPRESSED_PIECE_BYTES, `${plain.body.length} bytes: several pieces and their seams`);
        for (const coding of ['gzip', 'br']) {
          const coded = await request(base, url, { ...auth, 'accept-encoding': coding });
          assert.equal(coded.headers['content-encoding'], coding);
          assert.ok(coded.body.equals(plain.body), `${coding} decodes to the plain ${format}`);
        }
      }
    });

    it('a compressed export whose client goes away stops and releases its connection; one whose client stalls is cut off', async () => {
      // Incompressible descriptions (~60 kB a row): some 18 MB of CSV that gzip cannot shrink to fit the
      // socket buffers, so that the export is still running when its client stops reading.
      const ids = await t.database.store.db.selectFrom('products').select('id').execute();
      for (const { id } of ids) await t.database.store.db.updateTable('products').set({ description: randomBytes(45_000).toString('base64') }).where('id', '=', id).execute();
      const pool = t.database.store.pgPool;
      const checkedOut = () => (pool ? pool.totalCount - pool.idleCount : 0);
      // A reader that still holds an old snapshot of the SQLite file keeps a passive checkpoint from copying the whole WAL back.
      const snapshotHeld = async () => {
        const { rows } = await sql<{ log: number; checkpointed: number }>`pragma wal_checkpoint(PASSIVE)`.execute(t.database.store.db);
        return rows[0].checkpointed < rows[0].log;
      };

      const started = { ...exportStats };
      const clientsBefore = checkedOut();
      const leaving = await stalled(base, '/api/v2/products?format=csv', { ...auth, 'accept-encoding': 'gzip' });
      assert.equal(leaving.status, 200);
      assert.equal(leaving.headers['content-encoding'], 'gzip');
      assert.equal(exportStats.open, started.open + 1, 'the export waits for its client');
      if (dialect === 'sqlite') {
        await t.database.store.db.updateTable('brands').set({ description: 'changed during the export' }).where('id', '=', 1).execute();
        assert.equal(await snapshotHeld(), true, 'the export reads through a connection of its own');
      }
      leaving.destroy();
      await until('the export has stopped', () => exportStats.open === started.open);
      assert.equal(exportStats.aborted, started.aborted + 1, 'it ended because the client went away');
      assert.equal(exportStats.completed, started.completed);
      if (dialect === 'sqlite') assert.equal(await snapshotHeld(), false, 'its connection is closed');
      else await until('its client is back in the pool', () => checkedOut() <= clientsBefore);

      const stalls = await stalled(base, '/api/v2/products?format=csv', { ...auth, 'accept-encoding': 'br' });
      assert.equal(stalls.headers['content-encoding'], 'br');
      await until('the idle timeout cut the export off', () => exportStats.stalled === started.stalled + 1, 10_000);
      await until('the export has stopped', () => exportStats.open === started.open);
      if (dialect === 'postgres') await until('its client is back in the pool', () => checkedOut() <= clientsBefore);
      stalls.destroy();
    });
  });
}
