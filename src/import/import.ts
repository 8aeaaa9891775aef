import { sql } from 'kysely';
import type { Store } from '../db/database.ts';
import { analyzeTables } from '../db/statistics.ts';
import { AppError } from '../errors/app-error.ts';
import type { EventBus } from '../events/bus.ts';
import { publishStagedEvents, stageEvents, type WriteContext } from '../events/log.ts';
import { inTransaction } from '../events/transaction.ts';
import { appRegistry } from '../modules/registry.ts';
import type { Registry } from '../resources/registry.ts';
import type { Input, Resource } from '../resources/types.ts';
import { createItem, updateItem } from '../resources/writer.ts';
import { changesOf } from './diff.ts';
import { findExisting } from './match.ts';
import type { LineIssue, SourceRecord } from './records.ts';
import { formatOf, openSource, resourceOf, type ImportFormat } from './source.ts';
import { validateRecord, validatorsFor, type FieldIssue, type RecordValidators } from './validate.ts';

export interface ImportOptions {
  /** The collection; by default inferred from the file name. */
  resource?: string;
  /** `jsonl` or `csv`; by default from the extension. */
  format?: string;
  /** CSV delimiter; by default `;` when the header has more of them than commas, else `,`. */
  delimiter?: string;
  /** Stop reading after this many problems (they are all reported). */
  maxErrors?: number;
  onProgress?(bytesRead: number, totalBytes: number): void;
  /** The store's resources (by default its own): which collections there are, and how each is written. */
  resources?: Registry;
  /** Woken after the commit when the import recorded events (a server's own bus; another process hears NOTIFY or polls). */
  bus?: EventBus;
}

export interface ImportResult {
  resource: string;
  format: ImportFormat;
  records: number;
  created: number;
  updated: number;
  unchanged: number;
  events: number;
}

/** The import was refused: nothing was written. Each issue names its line. */
export class ImportFailed extends Error {
  readonly issues: LineIssue[];
  /** True when reading stopped at maxErrors, so later lines were not checked. */
  readonly truncated: boolean;

  constructor(resource: string, issues: LineIssue[], truncated: boolean) {
    super(`import of ${resource} failed with ${issues.length}${truncated ? '+' : ''} error${issues.length === 1 ? '' : 's'}; nothing was written`);
    this.issues = issues;
    this.truncated = truncated;
  }
}

export const formatIssue = (i: LineIssue): string => `line ${i.line}: ${i.field ? `${i.field}: ` : ''}${i.reason}`;

interface Tally {
  records: number;
  created: number;
  updated: number;
  unchanged: number;
  explicitIds: boolean;
}

type Outcome = { issues: FieldIssue[] } | { done: 'created' | 'updated' | 'unchanged'; explicitId?: boolean };

function positiveId(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** One record through the admin API's own write path: same validation, same checks, same events. */
async function writeRecord(w: WriteContext, registry: Registry, r: Resource, v: RecordValidators, record: Input): Promise<Outcome> {
  // Timestamps are the store's own; an export's id column says which item a row is.
  const { id: rawId, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = record;
  const id = positiveId(rawId);
  if (id === null) return { issues: [{ field: 'id', reason: 'must be a positive integer' }] };
  const shape = validateRecord(v.shape, fields);
  if (shape.length) return { issues: shape };
  const existing = await findExisting(w, r, id, fields);
  if (existing) {
    const { patch, issues } = changesOf(r, fields, existing);
    if (issues.length) return { issues };
    if (Object.keys(patch).length === 0) return { done: 'unchanged' };
    const invalid = validateRecord(v.patch, patch);
    if (invalid.length) return { issues: invalid };
    await updateItem(w, registry, r, Number(existing.id), patch);
    return { done: 'updated' };
  }
  const invalid = validateRecord(v.create, fields);
  if (invalid.length) return { issues: invalid };
  await createItem(w, registry, r, fields, id);
  return { done: 'created', explicitId: id !== undefined };
}

/** Items created with ids of their own leave PostgreSQL's identity sequence behind; move it past them. */
async function advanceSequence(w: WriteContext, r: Resource): Promise<void> {
  if (w.dialect !== 'postgres') return;
  await sql`select setval(pg_get_serial_sequence(${r.table}, 'id'), (select max(id) from ${sql.table(r.table)}))`.execute(w.trx);
}

function issuesOf(source: SourceRecord, found: FieldIssue[]): LineIssue[] {
  return found.map((i) => ({ line: i.field && source.lineOf ? source.lineOf(i.field) : source.line, ...i }));
}

/**
 * Imports a JSON Lines or CSV file into one collection, all or nothing: every record is created or updated
 * through the admin API's write path in one transaction, and any problem (reported by line, up to
 * maxErrors) rolls the whole file back. A record updates the item with its `id` or natural key, else creates.
 */
export async function importFile(store: Store, path: string, options: ImportOptions = {}): Promise<ImportResult> {
  const registry = options.resources ?? appRegistry();
  const resource = resourceOf(path, [...registry.byCollection.keys()], options.resource);
  const format = formatOf(path, options.format);
  const writer = registry.byCollection.get(resource)!;
  const validators = validatorsFor(writer);
  const maxErrors = options.maxErrors ?? 100;
  const source = openSource(path, format, writer, options.delimiter);
  const tally: Tally = { records: 0, created: 0, updated: 0, unchanged: 0, explicitIds: false };
  const problems: LineIssue[] = [];
  let truncated = false;
  let lastProgress = 0;

  const events = await inTransaction(store, options.bus, async (outer) => {
    // The events are recorded at the end, so that other writers do not wait for this one (see stageEvents).
    const w = await stageEvents(outer);
    for await (const item of source.records) {
      tally.records++;
      if (Date.now() - lastProgress > 200) {
        lastProgress = Date.now();
        options.onProgress?.(source.bytesRead(), source.totalBytes);
      }
      problems.push(...item.issues);
      if (item.fatal) break;
      if (problems.length >= maxErrors) {
        truncated = true;
        break;
      }
      if (!item.record) continue;
      try {
        const outcome = await writeRecord(w, registry, writer, validators, item.record);
        if ('issues' in outcome) problems.push(...issuesOf(item, outcome.issues));
        else {
          tally[outcome.done]++;
          tally.explicitIds ||= Boolean(outcome.explicitId);
        }
      } catch (error) {
        if (!(error instanceof AppError)) {
          // A database error leaves a PostgreSQL transaction unusable: report it and stop reading.
          problems.push({ line: item.line, reason: (error as Error).message });
          break;
        }
        problems.push(...issuesOf(item, error.errors?.length ? error.errors.map((e) => ({ field: e.name, reason: e.reason })) : [{ reason: error.message }]));
      }
    }
    if (problems.length) throw new ImportFailed(resource, problems.slice(0, maxErrors), truncated || problems.length > maxErrors);
    if (tally.explicitIds) await advanceSequence(w, writer);
    return publishStagedEvents(w);
  });
  // A file is a bulk load (often a whole catalogue): the planner is given statistics of it now, not at autovacuum's
  // next round. ANALYZE samples the table, so a small file costs a fraction of a second more.
  if (tally.created + tally.updated > 0) await analyzeTables(store.db, store.dialect, [writer.table]);
  options.onProgress?.(source.totalBytes, source.totalBytes);
  const { records, created, updated, unchanged } = tally;
  return { resource, format, records, created, updated, unchanged, events };
}
