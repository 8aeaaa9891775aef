import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';

// Migrations are frozen in time: they only use these helpers, which must never change meaning.
export type MigrationDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function isPostgres(db: MigrationDb): Promise<boolean> {
  try {
    await sql`select version()`.execute(db);
    return true;
  } catch {
    return false;
  }
}

export interface Types {
  pg: boolean;
  /** Adds an auto-incrementing integer primary key named `id`. */
  id<T extends string>(t: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'>;
  money: 'text' | 'numeric(14, 2)';
  real: 'real' | 'double precision';
  bigId: 'integer' | 'bigint';
}

export function typesFor(pg: boolean): Types {
  return {
    pg,
    id: (t) =>
      t.addColumn('id', pg ? 'bigint' : 'integer', (c: ColumnDefinitionBuilder) =>
        pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
      ),
    money: pg ? 'numeric(14, 2)' : 'text',
    real: pg ? 'double precision' : 'real',
    bigId: pg ? 'bigint' : 'integer',
  };
}
