/**
 * Rows as objects from rows as arrays of values, by a function made once per list of column names: each list gets
 * an object literal of its own, so V8 makes each row from that literal's template in one step.
 *
 * Why not the drivers' own objects: pg makes each row by spreading a template (`{ ...prebuilt }`) and then storing
 * each column by name, and better-sqlite3 sets each column on a new object from C++. Both do it at one place for
 * every query of the process, and a server runs queries of many shapes (tokens, rate limits, pages, items), so
 * that place sees too many shapes for V8 to keep a fast path: under `npm run bench -- --perf` pg's spread took
 * the slow path, one property at a time (`CloneObjectIC_Slow`, `CreateDataProperty`: 60 of the API's 1 595 µs for
 * a page of 100 products, nothing in ceiling (b), whose few queries keep the fast path).
 *
 * Names come from our own SQL (API field names as aliases), are quoted with JSON.stringify, and a list holding
 * `__proto__` (which a literal would take as the prototype) is built property by property instead.
 */
export type RowBuilder = (values: readonly unknown[]) => Record<string, unknown>;

export const MAX_BUILDERS = 1000;
const builders = new Map<string, RowBuilder>();

/** How many builders are kept, by column list and by statement (for tests of the bound). */
export const keptBuilders = (): { byColumns: number; byStatement: number } => ({ byColumns: builders.size, byStatement: bySql.size });

function slowBuilder(names: readonly string[]): RowBuilder {
  return (values) => {
    const row: Record<string, unknown> = {};
    names.forEach((name, i) => Object.defineProperty(row, name, { value: values[i], writable: true, enumerable: true, configurable: true }));
    return row;
  };
}

/** The builder of rows with these columns, in this order (a name given twice keeps its last value, as the drivers do). */
export function rowBuilder(names: readonly string[]): RowBuilder {
  const key = names.join('\u0000');
  let build = builders.get(key);
  if (build) return build;
  build = names.includes('__proto__')
    ? slowBuilder(names)
    : (new Function('v', `return { ${names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ')} };`) as RowBuilder);
  // Bounded: column lists come from clients too (`fields=`); the oldest goes first.
  if (builders.size >= MAX_BUILDERS) builders.delete(builders.keys().next().value as string);
  builders.set(key, build);
  return build;
}

const bySql = new Map<string, { build: RowBuilder; count: number }>();

/**
 * Every row of `rows` (arrays of values, in the order of `columns`) of the statement `sql` as an object. The
 * listing engine's statements name every column they select, so one text always yields the same columns, and
 * its builder is found by the text without reading the names again (a text whose column count changed, as a
 * `select *` could after a migration, is looked at again).
 */
export function objectRows(sql: string, columns: () => readonly string[], rows: readonly (readonly unknown[])[], count: number): Array<Record<string, unknown>> {
  if (rows.length === 0) return [];
  let known = bySql.get(sql);
  if (known?.count !== count) {
    known = { build: rowBuilder(columns()), count };
    if (bySql.size >= MAX_BUILDERS && !bySql.has(sql)) bySql.delete(bySql.keys().next().value as string);
    bySql.set(sql, known);
  }
  const build = known.build;
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = build(rows[i]);
  return out;
}
