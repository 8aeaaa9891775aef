// Ceiling (b): a bare node:http server running, for each case, the very SQL the API runs (compiled by the API's own
// listing engine) through the same driver, and answering JSON.stringify of the same envelope: no framework, no
// auth, no validation, no schema serializer. The API's overhead is measured against this.
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { hashingKey } from '../../src/auth/credentials.service.ts';
import { openSqliteConnection, openStore, type Store } from '../../src/db/database.ts';
import { cursorAfter, decodeRows, orderedQuery, plan, selectFields, type ListPlan } from '../../src/listing/engine.ts';
import type { Row } from '../../src/listing/resource.ts';
import { appRegistry } from '../../src/modules/registry.ts';
import { CASES_FILE_ENV, type BenchCase, type CasesFile } from '../lib/cases.ts';

const file = JSON.parse(readFileSync(process.env[CASES_FILE_ENV]!, 'utf8')) as CasesFile;
const def = appRegistry().byCollection.get(file.collection)!;
const url = process.env.DATABASE_URL!;

interface Compiled {
  sql: string;
  parameters: unknown[];
  /** For listings: the plan (for the next cursor) and the page size. */
  listing?: { plan: ListPlan; limit: number };
}

async function compile(store: Store, c: BenchCase, hashKey: string): Promise<Compiled> {
  if (c.list) {
    const p = plan(def, { limit: c.list.limit, cursor: c.list.cursor, filters: c.list.filters }, hashKey);
    const q = (await orderedQuery(store.db, p)).limit(c.list.limit + 1).compile();
    return { sql: q.sql, parameters: [...q.parameters], listing: { plan: p, limit: c.list.limit } };
  }
  const q = selectFields(def.from(store.db), def).where('t.id', '=', c.id!).compile();
  return { sql: q.sql, parameters: [...q.parameters] };
}

// The SQL comes from the listing engine; the store is used for compiling only, then closed.
const compileStore = openStore(url);
const compiled = new Map<string, Compiled>();
// The cases' cursors were signed by the API with this store's key; the next cursors are signed with it too.
const hashKey = await hashingKey(compileStore.db);
for (const c of file.cases) compiled.set(c.path, await compile(compileStore, c, hashKey));
await compileStore.close();

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
  // The pool size the API uses (src/db/database.ts).
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  run = async (entry) => (await pool.query(entry.sql, entry.parameters)).rows as Row[];
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
