import type { Kysely } from 'kysely';
import type { Executor } from '../db/database.ts';

// The kernel reads and writes tables named by declarations (a fixture's too), so it addresses them by name at run time.
type LooseDb = Record<string, Record<string, unknown>>;

/** The executor, typed for tables named at run time. */
export const loose = (db: Executor): Kysely<LooseDb> => db as unknown as Kysely<LooseDb>;
