import { filteredQuery, orderedQuery, type ListPlan } from '../engine.ts';
import { loadIncludes } from '../include.ts';
import type { Row } from '../resource.ts';
import type { ExportLayout, ExportRecord } from './columns.ts';
import type { ExportConnection } from './connection.ts';

/**
 * Batches are sized by the bytes they make (see `next`), down to a few rows: a batch is what an export holds
 * while its client is slow, and rows can be 100 kB. The first one, whose size is not known yet, is that few.
 */
const MIN_BATCH_ROWS = 4;
export const FIRST_BATCH_ROWS = MIN_BATCH_ROWS;
const MAX_BATCH_ROWS = 4096;

/**
 * The rows of a batch: what was asked, bounded, rounded down to a power of two. Few sizes mean few distinct
 * queries for the nested values of a batch (`where order_id in (…)`, a parameter per row), so their prepared
 * statements are reused (see connection.ts) instead of prepared anew for each batch.
 */
export const batchRows = (rows: number): number => 2 ** Math.floor(Math.log2(Math.max(MIN_BATCH_ROWS, Math.min(MAX_BATCH_ROWS, rows))));

/** The plan of the batch after a row of this id and sort value: the keyset position an export continues from. */
export const continuedAfter = (plan: ListPlan, id: unknown, sortValue: unknown): ListPlan =>
  ({ ...plan, after: plan.sortKey === 'id' ? [Number(id)] : [String(sortValue), Number(id)] });

/**
 * Every row of a listing, in its order, a batch at a time. Batches continue by keyset from the last row,
 * through the same `orderedQuery` as a JSON page (so filters, sort and a cursor mean exactly the same).
 * Keyset batches rather than one long-running statement: between two batches the connection is free for
 * the query that loads their nested values (order items, one query per batch) on the same snapshot,
 * which neither a better-sqlite3 iterator nor a pg cursor allows on their connection, and an abort
 * leaves no statement running.
 */
export class BatchSource {
  private plan: ListPlan;
  private done = false;
  private readonly idSlot: number;
  private readonly sortSlot: number;

  constructor(
    private readonly conn: ExportConnection,
    private readonly layout: ExportLayout,
    plan: ListPlan,
  ) {
    // The layout's shape decides what is selected (a caller may pass a layout of another shape than the plan's).
    this.plan = { ...plan, shape: layout.shape };
    const fields = layout.selected;
    this.idSlot = fields.findIndex((f) => f.name === 'id');
    this.sortSlot = fields.findIndex((f) => f.name === plan.sortKey);
  }

  /** The count of all matching items (what `includeTotal` reports), on the same snapshot. */
  async total(): Promise<number> {
    const q = (await filteredQuery(this.conn.db, this.plan)).select((eb) => eb.fn.countAll<number>().as('total'));
    const [row] = await this.conn.arrays(q.compile());
    return Number(row[0]);
  }

  /**
   * The next batch of records, or undefined at the end. `rows` asks for a batch size: the writer sizes
   * batches by the bytes they make, so that memory stays flat whether rows are 100 bytes or 100 kB.
   */
  async next(rows = FIRST_BATCH_ROWS): Promise<ExportRecord[] | undefined> {
    if (this.done) return undefined;
    const limit = batchRows(rows);
    const query = (await orderedQuery(this.conn.db, this.plan)).limit(limit);
    const records = await this.conn.arrays(query.compile());
    if (records.length < limit) this.done = true;
    if (records.length === 0) return undefined;
    const last = records[records.length - 1];
    this.plan = continuedAfter(this.plan, last[this.idSlot], last[this.sortSlot]);
    await this.complete(records);
    return records;
  }

  /**
   * Decodes stored values (JSON text into objects) and appends the nested values `attach` loads and the
   * included relations (one query per relation for the whole batch), on the export's own snapshot.
   */
  private async complete(records: ExportRecord[]): Promise<void> {
    const { def, selected, nestedKeys, includeKeys, shape } = this.layout;
    selected.forEach((f, slot) => {
      if (f.decode) for (const r of records) r[slot] = f.decode(r[slot]);
    });
    const attach = def.attach && nestedKeys.length > 0;
    if (!attach && includeKeys.length === 0) return;
    // A loop over the names rather than Object.fromEntries of [name, value] pairs: no array per field.
    const names = selected.map((f) => f.name);
    const items: Row[] = records.map((r) => {
      const item: Row = {};
      for (let slot = 0; slot < names.length; slot++) item[names[slot]] = r[slot];
      return item;
    });
    if (attach) await def.attach!(this.conn.db, items, this.conn.arrays);
    await loadIncludes(this.conn.db, shape.includes, items);
    records.forEach((r, i) => {
      for (const k of nestedKeys) r.push(items[i][k]);
      for (const k of includeKeys) r.push(items[i][k]);
    });
  }
}
