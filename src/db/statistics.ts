import { sql } from 'kysely';
import type { Dialect, Executor } from './database.ts';

/**
 * Gives PostgreSQL's planner statistics of tables a bulk load just filled (seeding, a follower's first copy,
 * an import). Until autovacuum's next analyze (a minute later on an idle server, longer on a busy one, never
 * where autovacuum is off, as on the machine of these figures) it plans from none: right after seeding 1.17 M
 * product-parameter values it guessed 723 846 rows and 610 parameters (there are 9), and joined each value to
 * its parameter by an index lookup per row; with statistics it memoizes that lookup. The NDJSON snapshot of
 * those values took 2.7-2.9 s on the freshly seeded store and 2.0-2.1 s on the same store once analyzed (in
 * process, three runs before and four after; docs/benchmarks.md, "Snapshots", for the benchmark after the
 * change). ANALYZE reads a sample of each table (30 000 rows at the default target): a fraction of a second
 * however large the table. SQLite's planner uses no statistics unless ANALYZE has created them, and then uses
 * them from that moment on, which would change plans the indexes were chosen for: nothing is done there.
 */
export async function analyzeTables(db: Executor, dialect: Dialect, tables: readonly string[]): Promise<void> {
  if (dialect !== 'postgres' || tables.length === 0) return;
  await sql`analyze ${sql.join([...new Set(tables)].map((t) => sql.table(t)))}`.execute(db);
}
