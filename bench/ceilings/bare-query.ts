// Ceiling (b): a bare node:http server running, for each case, the very SQL the API runs (compiled by the API's own
// listing engine) through the same driver, and answering JSON.stringify of the same envelope: no framework, no
// auth, no validation, no schema serializer. The API's overhead is measured against this.
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { openSqliteConnection } from '../../src/db/database.ts';
import { cursorAfter, decodeRows } from '../../src/listing/engine.ts';
import type { Row } from '../../src/listing/resource.ts';
import { compiledCases, type Compiled } from './compiled-cases.ts';

const { def, url, hashKey, byPath: compiled } = await compiledCases();

function body(entry: Compiled, rows: Row[]): string | undefined {
  decodeRows(def, rows);
  if (!entry.listing) return rows.length ? JSON.stringify(rows[0]) : undefined;
  const { plan: p, limit } = entry.listing;
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  return JSON.stringify({ data: rows, pagination: { limit, nextCursor: hasMore ? cursorAfter(p, rows[rows.length - 1], hashKey) : null, hasMore } });
}

function send(res: ServerResponse, text: string | undefined): void {
  if (text === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

let run: (entry: Compiled) => Promise<Row[]>;
if (url.startsWith('sqlite:')) {
  const conn = openSqliteConnection(url.slice('sqlite:'.length));
  // Prepared once per case, as a hand-written server would.
  const statements = new Map([...compiled.values()].map((e) => [e, conn.prepare(e.sql)]));
  run = async (entry) => statements.get(entry)!.all(...entry.parameters) as Row[];
} else {
  // The pool size the API uses (src/db/database.ts). Prepared once per connection (a named statement) where the
  // API's listing engine names its statement too (src/db/named-statements.ts): items and unfiltered pages.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const named = [...compiled.values()].filter((e) => !e.listing || Object.keys(e.listing.plan.filters).length === 0);
  const names = new Map(named.map((e, i) => [e, `bench_case_${i + 1}`]));
  run = async (entry) => (await pool.query({ name: names.get(entry), text: entry.sql, values: entry.parameters })).rows as Row[];
}

createServer((req, res) => {
  const entry = compiled.get(req.url ?? '');
  if (!entry) {
    res.writeHead(404).end();
    return;
  }
  run(entry).then((rows) => send(res, body(entry, rows)), (error: Error) => res.writeHead(500).end(error.message));
}).listen(Number(process.env.PORT), '127.0.0.1');

// Exit normally on a signal, so that `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
