import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * A read on a PostgreSQL connection, rows as arrays: pg's own query (`pg.Query`, the extended protocol,
 * named statements parsed once per connection) without two costs it pays on every query that rows as arrays
 * never use. pg copies a query given as a config object descriptor by descriptor (`cloneQueryConfig`), and on
 * every row description builds an object template for rows as objects (a dictionary of the columns, then
 * spread). Side by side, one product took 0.88 of the CPU per answer on PostgreSQL
 * (bench/results/side-by-side-2026-11-28T1845-pg-array-query.md). The listing engine's pages and items run here
 * (database.ts, `readDirect`), and so do exports' batches (formats/connection.ts).
 *
 * This leans on pg's internals as of pg 8.23 (`_result`, `_results`, `_rowMode`, and Result's `_parsers`, which
 * pg-cursor takes the same way): test/db/pg-array-query.test.ts compares its answers with `pool.query`'s, so an
 * upgrade that moves them fails there, not in production.
 */

interface PgResult {
  fields: pg.FieldDef[];
  rows: unknown[][];
  _parsers: Array<(value: string) => unknown> | undefined;
  addFields(fields: pg.FieldDef[]): void;
}

interface QueryInternals {
  name?: string;
  _rowMode: string;
  _result: PgResult;
  _results: PgResult | PgResult[];
}

const require = createRequire(import.meta.url);
const Result = require('pg/lib/result.js') as new (rowMode: string, types: undefined) => PgResult;

/** pg's result in array mode, keeping each column's parser only (what `_parseRowAsArray` reads). */
class ArrayResult extends Result {
  override addFields(fields: pg.FieldDef[]): void {
    this.fields = fields;
    const parsers = new Array<(value: string) => unknown>(fields.length);
    for (let i = 0; i < fields.length; i++) parsers[i] = pg.types.getTypeParser(fields[i].dataTypeID, fields[i].format === 'binary' ? 'binary' : 'text');
    this._parsers = parsers;
  }
}

type Callback = (error: Error | undefined, result: PgResult) => void;

class ArrayQuery extends pg.Query {
  constructor(name: string | undefined, text: string, values: unknown[], callback: Callback) {
    // A text, not a config object: pg takes a text as it is (the copy above is of config objects only).
    super(text, values, callback as never);
    const self = this as unknown as QueryInternals;
    if (name) self.name = name;
    self._rowMode = 'array';
    self._result = self._results = new ArrayResult('array', undefined);
  }
}

export interface ArrayRows {
  rows: unknown[][];
  fields: pg.FieldDef[];
}

/** Runs `text` with `values` on `client` (by `name` when given), rows as arrays; the caller keeps the client. */
export function queryArraysOn(client: pg.ClientBase, name: string | undefined, text: string, values: unknown[]): Promise<ArrayRows> {
  return new Promise((resolve, reject) => {
    client.query(new ArrayQuery(name, text, values, (error, result) => (error ? reject(error) : resolve({ rows: result.rows, fields: result.fields }))));
  });
}

/**
 * Runs `text` with `values` on a connection of `pool` (by `name` when given), rows as arrays. As `pool.query`
 * does, the connection goes back to the pool after the query, and is closed instead when the query failed
 * (pg may not know what state a failed query left it in). The pool's clients keep their own error listener
 * (database.ts, `createPgPool`), and on a lost socket pg hands every query of the connection its error first
 * (`_errorAllQueries`), so a connection lost meanwhile rejects this promise and nothing else.
 */
export function queryArrays(pool: pg.Pool, name: string | undefined, text: string, values: unknown[]): Promise<ArrayRows> {
  return new Promise((resolve, reject) => {
    pool.connect((connectError, client, release) => {
      if (connectError || !client) return reject(connectError ?? new Error('no connection from the pool'));
      queryArraysOn(client, name, text, values).then(
        (rows) => {
          release();
          resolve(rows);
        },
        (error: Error) => {
          release(error);
          reject(error);
        },
      );
    });
  });
}
