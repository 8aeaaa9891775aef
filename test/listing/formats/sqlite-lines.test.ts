import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql, type RawBuilder } from 'kysely';
import { plan, withShape, type ListPlan } from '../../../src/listing/engine.ts';
import { exportLayout } from '../../../src/listing/formats/columns.ts';
import { openExportConnection } from '../../../src/listing/formats/connection.ts';
import { CSV_DEFAULTS, type CsvOptions } from '../../../src/listing/formats/csv.ts';
import { lineSourceStats } from '../../../src/listing/formats/line-source.ts';
import { sqliteCsvCells, sqliteJsonNumber, sqliteLine, sqliteNumberInRange } from '../../../src/listing/formats/sqlite-lines.ts';
import { streamExport } from '../../../src/listing/formats/stream.ts';
import type { Shape } from '../../../src/listing/shape.ts';
import { RESOURCES } from '../../../src/modules/registry.ts';
import type { Resource } from '../../../src/resources/types.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';

/** Characters JSON.stringify treats apart, and some it must not. */
const TRICKY = ['"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\x00', '\x01', '\x1f', '\x7f', '\u2028', '\u2029', '\ud800', '\udfff', '😀', 'é', 'Ž', 'a', ' ', "'", '{', '}', ','];
const text = fc.oneof(
  fc.array(fc.constantFrom(...TRICKY), { maxLength: 12 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** The significant digits of a number as JavaScript writes it in fixed notation (`-0.00123` has 3, `1200` has 2). */
function significant(written: string): number {
  const digits = written.replace('-', '');
  return (digits.startsWith('0.') ? digits.slice(2).replace(/^0+/, '') : digits.replace('.', '')).replace(/0+$/, '').length;
}

async function bytesOf(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('NDJSON lines SQLite writes', { timeout: 300_000 }, () => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp('sqlite', { seed: { products: 30, orders: 5 } });
  });
  after(() => t.close());

  /** Each value (as SQLite holds it once bound) through `expr`, with the value as it reads back into JavaScript. */
  const column = async <T,>(values: unknown[], expr: (x: RawBuilder<string>) => RawBuilder<unknown>): Promise<Array<{ raw: unknown; v: T }>> => {
    const rows = sql.join(values.map((v, i) => sql`(${i}, ${v})`));
    const x = sql.ref('u.x') as unknown as RawBuilder<string>;
    const { rows: out } = await sql<{ raw: unknown; v: T }>`with u(i, x) as (values ${rows}) select u.x as raw, ${expr(x)} as v from u order by u.i`.execute(t.database.store.db);
    return out;
  };

  it('writes every number of its range as JSON.stringify, and says which are outside', async () => {
    const edges = [0, -0, 1, -1, 21, 2.5, 0.1, 0.30000000000000004, 1e-4, -1e-4, 1.2345e-4, 99.99999, 123456789012345.6, 999999999999999.9, 1e15 - 1, 0.000123, 12.5];
    const outside = [1e-7, 1.5e-7, 9.99e-5, 5e-324, 1e15, 1e16, 1234567890123456.8, 54935381158050940, 2 ** 53, 1e21, 1.7976931348623157e308, Infinity, -Infinity];
    const check = async (xs: number[]) => {
      // As bound (a REAL), and as an integer where the value is one: a REAL column holds integral values so.
      for (const stored of [(x: RawBuilder<string>) => x, (x: RawBuilder<string>) => sql<string>`case when ${x} = cast(${x} as integer) and abs(${x}) < 9e18 then cast(${x} as integer) else ${x} end`]) {
        const json = await column<string>(xs, (x) => sqliteJsonNumber(stored(x)));
        const inRange = await column<number>(xs, (x) => sqliteNumberInRange(stored(x)));
        xs.forEach((x, i) => {
          const shortest = JSON.stringify(x);
          const within = x === 0 || (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15 && significant(shortest) <= 15);
          assert.equal(inRange[i].v === 1, within, `${x} in range`);
          if (within) assert.equal(json[i].v, shortest, `JSON of ${x}`);
        });
      }
    };
    await check([...edges, ...outside]);
    // NULL stays NULL (printf alone would write 0), and counts as in range.
    assert.deepEqual((await column<string>([null], (x) => sqliteJsonNumber(x))).map((r) => r.v), [null]);
    assert.deepEqual((await column<string>([null], (x) => sql`json_object('x', ${sqliteJsonNumber(x)})`)).map((r) => r.v), ['{"x":null}']);
    assert.deepEqual((await column<number>([null], (x) => sqliteNumberInRange(x))).map((r) => r.v), [1]);
    const inRange = fc.oneof(fc.double({ min: 1e-4, max: 1e15, noNaN: true }), fc.double({ min: -1e15, max: -1e-4, noNaN: true }), fc.double({ min: 1e-4, max: 1e3, noNaN: true }));
    // Values of few digits, as prices, weights and rates are (those from 1e-4 up are in range).
    const short = fc.tuple(fc.integer({ min: -999_999_999, max: 999_999_999 }), fc.integer({ min: 0, max: 6 })).map(([n, d]) => n / 10 ** d);
    await fc.assert(fc.asyncProperty(fc.array(fc.oneof(inRange, short, fc.double({ noNaN: true })), { minLength: 1, maxLength: 300 }), check), { numRuns: 60 });
  });

  it('writes every text as JSON.stringify writes the text it reads back', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 300 }), async (values) => {
        const lines = await column<string>(values, (x) => sql`json_object('x', ${x})`);
        for (const { raw, v } of lines) assert.equal(v, JSON.stringify({ x: raw }), JSON.stringify(raw));
      }),
      { numRuns: 60 },
    );
  });

  /**
   * A whole export of `def`, written by SQLite and by the JavaScript encoder: the same bytes. `by`: which wrote
   * the first export's batches (`sqlite`: all of them; `both`: SQLite's lines, then records from a batch with a
   * row SQLite does not write as JavaScript would (a number printf writes otherwise, a CSV text holding the cell
   * separator); `javascript`: none were SQLite's; `either`: not checked). `csv`: a CSV export with these options.
   */
  async function sameBoth(def: Resource, p: ListPlan, shape: Shape | undefined, by: 'sqlite' | 'both' | 'javascript' | 'either' = 'sqlite', csv?: CsvOptions): Promise<void> {
    const conn = await openExportConnection(t.database.store, 'sqlite-lines test');
    try {
      const shaped = shape === undefined ? p : withShape(p, shape);
      const layout = exportLayout(def, shaped.shape);
      assert.ok(csv ? sqliteCsvCells(layout, csv) : sqliteLine(layout), `${def.collection}: SQLite has its lines`);
      const format = csv ? 'csv' : 'ndjson';
      const before = { ...lineSourceStats };
      let counted = 0;
      const database = await bytesOf(await streamExport(conn, def, p, shape, { format, csv, onBatch: (n) => (counted += n) }));
      const lines = lineSourceStats.lineBatches - before.lineBatches;
      const records = lineSourceStats.recordBatches - before.recordBatches;
      let countedHere = 0;
      const javascript = await bytesOf(await streamExport(conn, def, p, shape, { format, csv, encodeInDatabase: false, onBatch: (n) => (countedHere += n) }));
      const what = `${def.collection} ${JSON.stringify(shape)} ${JSON.stringify(csv)}`;
      assert.equal(database.toString('utf8'), javascript.toString('utf8'), what);
      assert.ok(database.equals(javascript));
      assert.equal(counted, countedHere, 'rows counted as written');
      if (!csv) assert.equal(counted, javascript.toString('utf8').split('\n').length - 1, 'rows counted as written');
      if (by === 'either') return;
      const expected = { sqlite: [true, false], both: [true, true], javascript: [false, true] }[by];
      assert.deepEqual([lines > 0, records > 0], expected, `${what}: batches of lines ${lines}, of records ${records}`);
    } finally {
      await conn.close();
    }
  }

  it('every NDJSON export of a plain collection is the same bytes whichever writes it: fields, sorts, filters, cursors, many batches', async () => {
    const names = ['=SUM(A1:A2)', 'quote "x"', 'line\nbreak', 'cr\rx', 'tab\tx', 'back\\slash', "it's", 'žluťoučký kůň 😀', 'sep\u2028x', 'ctl\x01\x1f\x7f', 'slash /x', '{"json": [1]}'];
    for (const [i, name] of names.entries()) {
      const res = await t.admin('POST', '/admin/api/products', {
        articleNumber: `SQL-${i}`,
        name,
        description: i % 3 === 0 ? null : `${name} ${name}`.repeat(i * 40),
        price: `${i}.5`,
        currency: 'CZK',
        vatRate: [0, 21, 0.000123, 0.1, 99.99999, 12.5][i % 6],
        weight: [null, 0, 1e-4, 1.5e-3, 99999999999999.9, 123456.789, 0.3, 2][i % 8],
        url: i % 2 ? `http://shop.test/?q="${i}",x` : null,
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const plans = (def: Resource): Array<Record<string, unknown>> => [
      { filters: {} },
      { filters: {}, sort: '-updatedAt' },
      { filters: {}, sort: 'createdAt' },
      { filters: def.collection === 'products' ? { q: "it's" } : { updatedSince: '2000-01-01T00:00:00Z' } },
      { filters: { ids: '1,3,5,7,40,41,42' }, sort: '-id' },
    ];
    for (const def of RESOURCES.filter((r) => exportLayout(r).identity)) {
      for (const request of plans(def)) {
        if (request.sort && !(def.sorts as string[]).includes(String(request.sort).replace(/^-/, ''))) continue;
        await sameBoth(def, plan(def, request as never, t.ctx.hashKey), undefined);
      }
      const some = def.fields.filter((f) => f.name !== 'id').slice(0, 3).map((f) => f.name);
      await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some });
      const page = await t.get(`/api/v2/${def.collection}?limit=3&sort=-updatedAt`, (await t.credential([def.scope])).token);
      const cursor = page.json().pagination.nextCursor as string | null;
      if (cursor) await sameBoth(def, plan(def, { filters: {}, cursor }, t.ctx.hashKey), undefined);
    }
    // A number printf writes otherwise than JavaScript (the last product): the first batches are SQLite's lines,
    // the batch holding it and any after are records encoded in JavaScript; the bytes are the same.
    const products = RESOURCES.find((r) => r.collection === 'products')!;
    for (const weight of [1e21, 1.5e-7, 0.1 + 0.7, 999999999999999.9, 54935381158050940]) {
      const res = await t.admin('POST', '/admin/api/products', { articleNumber: `SQL-W-${weight}`, name: 'Heavy', price: '1.00', currency: 'CZK', vatRate: 21, weight });
      assert.equal(res.statusCode, 201, res.body);
      await sameBoth(products, plan(products, { filters: {} }, t.ctx.hashKey), undefined, 'both');
      // Newest first, it is in the first batch: no line is SQLite's.
      await sameBoth(products, plan(products, { filters: {}, sort: '-id' }, t.ctx.hashKey), undefined, 'javascript');
      // Exports without it are SQLite's to write.
      await sameBoth(products, plan(products, { filters: { ids: '1,2,3' } }, t.ctx.hashKey), undefined);
      await t.admin('DELETE', `/admin/api/products/${(res.json() as { id: number }).id}`);
    }
  });

  it('every CSV export of a plain collection is the same bytes whichever writes it: delimiters, formula guard, fields, sorts, filters, cursors', async () => {
    // Texts CSV quotes or guards, in every text column of the plain collections: names, parameter values and units, filter values.
    const tricky = ['a,b', 'say "hi"', '=cmd()', '-123', '+4.5', '@x', '-x', 'tab\tx', '\tlead', 'semi;colon', 'pipe|x', 'line\nbreak', 'cr\rx', 'crlf\r\n', ' lead', 'žluť 😀', "'quoted", '1,5 kg'];
    for (const [i, name] of tricky.entries()) {
      for (const collection of ['brands', 'categories']) {
        const res = await t.admin('POST', `/admin/api/${collection}`, { name: `${name} ${collection} ${i}` });
        assert.equal(res.statusCode, 201, res.body);
      }
      let res = await t.admin('POST', '/admin/api/product-parameters', { productId: 1 + i, parameterName: `P ${name}`, value: name, unit: i % 2 ? name : null });
      assert.equal(res.statusCode, 201, res.body);
      res = await t.admin('POST', '/admin/api/product-filters', { productId: 1 + i, filterName: `F ${name}`, value: name });
      assert.equal(res.statusCode, 201, res.body);
      res = await t.admin('POST', '/admin/api/products', { articleNumber: name, name, description: i % 3 ? `${name} `.repeat(i * 30) : null, price: `${i}.25`, currency: 'CZK', vatRate: [21, 0.000123, 12.5][i % 3], weight: [null, 0, 1.5e-3, 123456.789][i % 4] });
      assert.equal(res.statusCode, 201, res.body);
    }
    const options: CsvOptions[] = [
      CSV_DEFAULTS,
      { ...CSV_DEFAULTS, delimiter: ';' },
      { ...CSV_DEFAULTS, delimiter: '\t', escapeFormulas: false },
      { ...CSV_DEFAULTS, delimiter: '|', bom: true },
    ];
    // Products may hold a name with the cell separator (the NDJSON test's): theirs may go either way, checked below.
    const by = (def: Resource) => (def.collection === 'products' ? 'either' : 'sqlite');
    for (const def of RESOURCES.filter((r) => exportLayout(r).identity)) {
      const page = await t.get(`/api/v2/${def.collection}?limit=3&sort=-updatedAt`, (await t.credential([def.scope])).token);
      const cursor = page.json().pagination.nextCursor as string | null;
      const some = def.fields.filter((f) => f.name !== 'id').slice(0, 3).map((f) => f.name);
      for (const csv of options) {
        for (const request of [{ filters: {} }, { filters: {}, sort: '-updatedAt' }, { filters: { ids: '1,3,5,7,20,21,22' }, sort: '-id' }, ...(cursor ? [{ filters: {}, cursor }] : [])]) {
          if (request.sort && !(def.sorts as string[]).includes(request.sort.replace(/^-/, ''))) continue;
          await sameBoth(def, plan(def, request as never, t.ctx.hashKey), undefined, by(def), csv);
        }
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some }, by(def), csv);
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: ['name'].filter((f) => def.fields.some((x) => x.name === f)).concat(['id']) }, by(def), csv);
      }
    }
    // Rows SQLite does not write as JavaScript would: a text holding the cell separator (the cells cannot be told
    // apart), a number printf writes otherwise. The batch holding one and those after are records encoded in JavaScript.
    const products = RESOURCES.find((r) => r.collection === 'products')!;
    const seeded = await t.get('/api/v2/products?limit=8&sort=id', (await t.credential(['products:read'])).token);
    const first = (seeded.json().data as Array<{ id: number }>).map((p) => p.id).join(',');
    for (const [k, odd] of [{ name: 'sep\x1fx' }, { articleNumber: 'a\x1f\x1fb' }, { weight: 1e21 }, { weight: 0.1 + 0.7 }].entries()) {
      const res = await t.admin('POST', '/admin/api/products', { articleNumber: `CSV-ODD-${k}`, name: 'Odd', price: '1.00', currency: 'CZK', vatRate: 21, ...odd });
      assert.equal(res.statusCode, 201, res.body);
      await sameBoth(products, plan(products, { filters: {}, sort: '-id' }, t.ctx.hashKey), undefined, 'javascript', CSV_DEFAULTS);
      await sameBoth(products, plan(products, { filters: { ids: `${first},${(res.json() as { id: number }).id}` } }, t.ctx.hashKey), undefined, 'both', { ...CSV_DEFAULTS, delimiter: ';' });
      await sameBoth(products, plan(products, { filters: { ids: first } }, t.ctx.hashKey), undefined, 'sqlite', CSV_DEFAULTS);
      await t.admin('DELETE', `/admin/api/products/${(res.json() as { id: number }).id}`);
    }
  });

  it('leaves to JavaScript what it does not write: nested values, includes, CSV for spreadsheets or with a decimal comma', async () => {
    const conn = await openExportConnection(t.database.store, 'sqlite-lines test');
    try {
      const orders = RESOURCES.find((r) => r.collection === 'orders')!;
      const products = RESOURCES.find((r) => r.collection === 'products')!;
      const withBrand = plan(products, { filters: {}, shape: { include: ['brand'] } }, t.ctx.hashKey);
      assert.equal(sqliteLine(exportLayout(orders)), undefined);
      assert.equal(sqliteLine(exportLayout(products, withBrand.shape)), undefined);
      assert.equal(sqliteCsvCells(exportLayout(orders), CSV_DEFAULTS), undefined);
      assert.equal(sqliteCsvCells(exportLayout(products, withBrand.shape), CSV_DEFAULTS), undefined);
      const czech = { ...CSV_DEFAULTS, delimiter: ';', decimal: ',' as const };
      const spreadsheet = { ...CSV_DEFAULTS, spreadsheet: true };
      // None of these exports reads a batch of lines: orders, products with their brand, and a plain collection in
      // CSV with a decimal comma or for a spreadsheet (cells SQLite would write otherwise).
      const before = { ...lineSourceStats };
      const exports = [
        await bytesOf(await streamExport(conn, orders, plan(orders, { filters: {} }, t.ctx.hashKey), undefined, { format: 'ndjson' })),
        await bytesOf(await streamExport(conn, products, withBrand, undefined, { format: 'ndjson' })),
        await bytesOf(await streamExport(conn, products, plan(products, { filters: {} }, t.ctx.hashKey), undefined, { format: 'csv', csv: czech })),
        await bytesOf(await streamExport(conn, products, plan(products, { filters: {} }, t.ctx.hashKey), undefined, { format: 'csv', csv: spreadsheet })),
        await bytesOf(await streamExport(conn, orders, plan(orders, { filters: {} }, t.ctx.hashKey), undefined, { format: 'csv', csv: CSV_DEFAULTS })),
      ];
      assert.deepEqual(lineSourceStats, before);
      assert.ok(exports.every((bytes) => bytes.length > 0));
      assert.match(exports[1].toString('utf8'), /"brand":\{"id":/);
      assert.match(exports[2].toString('utf8'), /^id;/);
      assert.match(exports[3].toString('utf8'), /^id,/);
      assert.match(exports[4].toString('utf8'), /^id,/);
    } finally {
      await conn.close();
    }
  });
});
