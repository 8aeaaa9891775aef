import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Resource } from '../resources/types.ts';
import { csvRecords, detectDelimiter } from './csv.ts';
import { jsonlRecords } from './jsonl.ts';
import type { SourceRecord } from './records.ts';

export type ImportFormat = 'jsonl' | 'csv';
export const IMPORT_FORMATS: readonly ImportFormat[] = ['jsonl', 'csv'];


export interface RecordSource {
  format: ImportFormat;
  totalBytes: number;
  bytesRead(): number;
  records: AsyncIterable<SourceRecord>;
}

/** The file or the options do not say what to import (unknown format or resource). */
export class ImportUsageError extends Error {}

const EXTENSIONS: Record<string, ImportFormat> = { '.jsonl': 'jsonl', '.ndjson': 'jsonl', '.csv': 'csv' };

export function formatOf(path: string, given?: string): ImportFormat {
  if (given !== undefined) {
    if (!IMPORT_FORMATS.includes(given as ImportFormat)) throw new ImportUsageError(`--format must be one of ${IMPORT_FORMATS.join(', ')}, got "${given}"`);
    return given as ImportFormat;
  }
  const ext = Object.keys(EXTENSIONS).find((e) => path.toLowerCase().endsWith(e));
  if (!ext) throw new ImportUsageError(`cannot tell the format of ${basename(path)} from its extension (.jsonl, .ndjson or .csv); give --format jsonl|csv`);
  return EXTENSIONS[ext];
}

/**
 * The collection named by --resource, or by the start of the file name (`products.csv`, `product-parameters-2026.jsonl`,
 * or the `products-….csv` an export downloads as).
 */
export function resourceOf(path: string, collections: string[], given?: string): string {
  if (given !== undefined) {
    if (!collections.includes(given)) throw new ImportUsageError(`--resource must be one of ${collections.join(', ')}, got "${given}"`);
    return given;
  }
  const name = basename(path).toLowerCase();
  const found = collections
    .filter((c) => name === c || (name.startsWith(c) && /[-_.\s]/.test(name[c.length])))
    .sort((a, b) => b.length - a.length)[0];
  if (!found) throw new ImportUsageError(`cannot tell the resource from the file name ${basename(path)}; give --resource ${collections.join('|')}`);
  return found;
}

/** Opens the file as a stream of records: nothing is read whole into memory. */
export function openSource(path: string, format: ImportFormat, resource: Resource, delimiter?: string): RecordSource {
  const totalBytes = statSync(path).size;
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const records = format === 'jsonl' ? jsonlRecords(stream) : csvRecords(stream, resource, delimiter ?? detectDelimiter(path));
  return { format, totalBytes, bytesRead: () => stream.bytesRead, records };
}
