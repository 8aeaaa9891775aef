import { closeSync, openSync, readSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { JsonSchema, Resource } from '../resources/types.ts';
import { objectFrom, READ_ONLY_COLUMNS, type CsvRow } from './cells.ts';
import { groupedLayout, groupedRecords } from './grouped-rows.ts';
import type { SourceRecord } from './records.ts';

/** `;` when the header has more semicolons than commas (spreadsheets in many European locales), else `,`. */
export function detectDelimiter(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const header = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8').split(/\r?\n/, 1)[0];
    return header.split(';').length > header.split(',').length ? ';' : ',';
  } catch {
    return ',';
  } finally {
    closeSync(fd);
  }
}

/** The rows of an RFC 4180 file with a header row, each with the line it starts on. Throws CsvError on broken CSV. */
export async function* csvRows(stream: Readable, delimiter: string): AsyncGenerator<CsvRow> {
  const parser = stream.pipe(parse({ columns: (header: string[]) => header.map((h) => h.trim()), info: true, bom: true, delimiter, skip_empty_lines: true }));
  let lines = 1;
  let empty = 0;
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; empty_lines: number } }>) {
    // `info.lines` is where the record ends (a quoted value may span lines); it starts after the previous one and any blank lines.
    const line = lines + 1 + (info.empty_lines - empty);
    lines = info.lines;
    empty = info.empty_lines;
    yield { line, cells: record };
  }
}

function checkHeader(columns: string[], allowed: string[]): string | undefined {
  const unknown = columns.filter((c) => !allowed.includes(c));
  const twice = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (unknown.length) return `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((c) => `"${c}"`).join(', ')}; the columns are ${allowed.join(', ')}`;
  if (twice.length) return `column "${twice[0]}" appears twice`;
  return undefined;
}

async function* flatRecords(rows: AsyncIterable<CsvRow>, w: Resource): AsyncGenerator<SourceRecord> {
  const properties = w.createSchema.properties as Record<string, JsonSchema>;
  const allowed = [...READ_ONLY_COLUMNS, ...Object.keys(properties)];
  const columns = Object.fromEntries(allowed.map((c) => [c, c]));
  let first = true;
  for await (const row of rows) {
    if (first) {
      first = false;
      const problem = checkHeader(Object.keys(row.cells), allowed);
      if (problem) {
        yield { line: 1, issues: [{ line: 1, reason: problem }], fatal: true };
        return;
      }
    }
    yield { line: row.line, record: objectFrom(row.cells, columns, properties), issues: [] };
  }
}

/** The records of a CSV file with a header row of API field names (a resource exported a row per nested element: see grouped-rows.ts). */
export async function* csvRecords(stream: Readable, w: Resource, delimiter: string): AsyncGenerator<SourceRecord> {
  const rows = csvRows(stream, delimiter);
  try {
    if (w.exportRowPer) {
      let first = true;
      for await (const record of groupedRecords(rows, w, (columns) => checkHeader(columns, groupedLayout(w).all))) {
        yield record;
        if (first && record.fatal) return;
        first = false;
      }
    } else {
      yield* flatRecords(rows, w);
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = (error as CsvError & { lines?: number }).lines ?? 0;
    yield { line, issues: [{ line, reason: `is not valid CSV (${error.message})` }], fatal: true };
  }
}
