// What the ceilings (b) and (c) share: the benchmark's cases compiled to the very SQL the API runs (by the API's
// own listing engine), and the signed cursor of the next page. The store is opened for compiling only, then closed.
import { readFileSync } from 'node:fs';
import { hashingKey } from '../../src/auth/credentials.service.ts';
import { openStore, type Store } from '../../src/db/database.ts';
import { orderedQuery, plan, selectFields, type ListPlan } from '../../src/listing/engine.ts';
import type { ResourceDef } from '../../src/listing/resource.ts';
import { appRegistry } from '../../src/modules/registry.ts';
import { CASES_FILE_ENV, type BenchCase, type CasesFile } from '../lib/cases.ts';

export interface Compiled {
  sql: string;
  parameters: unknown[];
  /** For listings: the plan (for the next cursor) and the page size. */
  listing?: { plan: ListPlan; limit: number };
}

export interface CompiledCases {
  def: ResourceDef;
  url: string;
  /** The installation's hashing key: the cases' cursors were signed with it, and so are the next ones. */
  hashKey: string;
  byPath: Map<string, Compiled>;
}

async function compile(store: Store, def: ResourceDef, c: BenchCase, hashKey: string): Promise<Compiled> {
  if (c.list) {
    const p = plan(def, { limit: c.list.limit, cursor: c.list.cursor, filters: c.list.filters }, hashKey);
    const q = (await orderedQuery(store.db, p)).limit(c.list.limit + 1).compile();
    return { sql: q.sql, parameters: [...q.parameters], listing: { plan: p, limit: c.list.limit } };
  }
  const q = selectFields(def.from(store.db), def).where('t.id', '=', c.id!).compile();
  return { sql: q.sql, parameters: [...q.parameters] };
}

/** The cases of the file named by BENCH_CASES_FILE, for the database of DATABASE_URL. */
export async function compiledCases(): Promise<CompiledCases> {
  const file = JSON.parse(readFileSync(process.env[CASES_FILE_ENV]!, 'utf8')) as CasesFile;
  const def = appRegistry().byCollection.get(file.collection)!;
  const url = process.env.DATABASE_URL!;
  const store = openStore(url);
  try {
    const hashKey = await hashingKey(store.db);
    const byPath = new Map<string, Compiled>();
    for (const c of file.cases) byPath.set(c.path, await compile(store, def, c, hashKey));
    return { def, url, hashKey, byPath };
  } finally {
    await store.close();
  }
}
