/** One measured request of the core benchmark, described so that the bare-query ceiling can run the same query. */
export interface BenchCase {
  name: string;
  /** Path and query, as requested from every server. */
  path: string;
  /** A listing page: what the API's listing engine is asked for. */
  list?: { limit: number; cursor?: string; filters: Record<string, string> };
  /** A single item by id. */
  id?: number;
}

/** Servers of the ceilings read their cases (and the static one its bodies) from a JSON file named by this variable. */
export const CASES_FILE_ENV = 'BENCH_CASES_FILE';

export interface CasesFile {
  collection: string;
  cases: BenchCase[];
  /** Bodies by path, for the static ceiling. */
  bodies?: Record<string, string>;
}
