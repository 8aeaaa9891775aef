// What ceilings (b) and (f) answer: for each case, the very SQL the API runs (compiled by its own listing engine)
// through the same driver, and JSON.stringify of the same envelope. (b) serves it from bare node:http, (f) from
// Fastify with nothing else: the two differ by the framework alone.
import pg from 'pg';
import { openSqliteConnection } from '../../src/db/database.ts';
import { cursorAfter, decodeRows } from '../../src/listing/engine.ts';
import type { Row } from '../../src/listing/resource.ts';
import { compiledCases, type Compiled } from './compiled-cases.ts';

/** The JSON answer of a case's path (undefined: no such case, or no such item), from the case's own SQL. */
export type Answer = (path: string) => Promise<string | undefined> | undefined;

export async function queryAnswers(): Promise<Answer> {
  const { def, url, hashKey, byPath: compiled } = await compiledCases();

  const body = (entry: Compiled, rows: Row[]): string | undefined => {
    decodeRows(def, rows);
    if (!entry.listing) return rows.length ? JSON.stringify(rows[0]) : undefined;
    const { plan: p, limit } = entry.listing;
    const hasMore = rows.length > limit;
    if (hasMore) rows.length = limit;
    return JSON.stringify({ data: rows, pagination: { limit, nextCursor: hasMore ? cursorAfter(p, rows[rows.length - 1], hashKey) : null, hasMore } });
  };

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

  return (path) => {
    const entry = compiled.get(path);
    return entry && run(entry).then((rows) => body(entry, rows));
  };
}
