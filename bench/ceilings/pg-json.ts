// Ceiling (c), PostgreSQL only: a bare node:http server whose JSON PostgreSQL builds itself, the way PostgREST
// serves. It runs the very SQL the API runs (compiled by the API's listing engine, the same keyset and filters),
// wrapped so that PostgreSQL turns each row into JSON text (`row_to_json`) and joins the page's rows into one
// array; Node only adds the envelope and signs the next cursor. Node parses one text value per page instead of
// 100 rows of 16 columns, and stringifies nothing.
//
// `string_agg(row_to_json(r)::text, ',')`, not `json_agg(r)`: json_agg separates elements with ", \n ", and the
// run checks that this server answers byte for byte what the API answers. Money (numeric) is cast to text, as
// the API sends it (an exact decimal string); JSON text columns (object/array fields) are cast to json.
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { cursorAfter } from '../../src/listing/engine.ts';
import type { Field, Row } from '../../src/listing/resource.ts';
import { compiledCases, type Compiled } from './compiled-cases.ts';

const { def, url, hashKey, byPath } = await compiledCases();
if (url.startsWith('sqlite:')) throw new Error('ceiling (c) is for PostgreSQL only');

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const column = (f: Field) => {
  const ref = `s.${quote(f.name)}`;
  if (f.type === 'money') return `${ref}::text as ${quote(f.name)}`;
  if (f.type === 'object' || f.type === 'array') return `${ref}::json as ${quote(f.name)}`;
  return ref;
};
const columns = def.fields.map(column).join(', ');

interface Wrapped {
  entry: Compiled;
  sql: string;
  parameters: unknown[];
}

/** The case's SQL, wrapped: a page answers one row (the data array as text, the row count, the last row's keyset). */
function wrap(entry: Compiled): Wrapped {
  const rows = `select ${columns} from (${entry.sql}) s`;
  if (!entry.listing) return { entry, sql: `select row_to_json(r)::text as j from (${rows}) r`, parameters: entry.parameters };
  const { plan: p, limit } = entry.listing;
  const n = `$${entry.parameters.length + 1}`;
  const key = p.sortKey === 'id' ? 'null' : `r.${quote(p.sortKey)}`;
  return {
    entry,
    sql:
      `select '[' || coalesce(string_agg(x.j, ',' order by x.n) filter (where x.n <= ${n}), '') || ']' as data, count(*)::int as rows, ` +
      `min(x.id) filter (where x.n = ${n}) as last_id, min(x.k) filter (where x.n = ${n}) as last_key ` +
      `from (select row_number() over () as n, row_to_json(r)::text as j, r.id, ${key} as k from (${rows}) r) x`,
    parameters: [...entry.parameters, limit],
  };
}

const wrapped = new Map([...byPath].map(([path, entry]) => [path, wrap(entry)]));

interface PageRow {
  data: string;
  rows: number;
  last_id: number | null;
  last_key: string | null;
}

function body(w: Wrapped, result: pg.QueryResult): string | undefined {
  if (!w.entry.listing) return result.rows.length ? (result.rows[0] as { j: string }).j : undefined;
  const { plan: p, limit } = w.entry.listing;
  const page = result.rows[0] as PageRow;
  const hasMore = page.rows > limit;
  const last: Row = { id: page.last_id, ...(p.sortKey === 'id' ? {} : { [p.sortKey]: page.last_key }) };
  const nextCursor = hasMore ? JSON.stringify(cursorAfter(p, last, hashKey)) : 'null';
  return `{"data":${page.data},"pagination":{"limit":${limit},"nextCursor":${nextCursor},"hasMore":${hasMore}}}`;
}

function send(res: ServerResponse, text: string | undefined): void {
  if (text === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// The pool size the API uses (src/db/database.ts).
const pool = new pg.Pool({ connectionString: url, max: 10 });

createServer((req, res) => {
  const w = wrapped.get(req.url ?? '');
  if (!w) {
    res.writeHead(404).end();
    return;
  }
  pool.query(w.sql, w.parameters).then((result) => send(res, body(w, result)), (error: Error) => res.writeHead(500).end(error.message));
}).listen(Number(process.env.PORT), '127.0.0.1');

// Exit normally on a signal, so that `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
