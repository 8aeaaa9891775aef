import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import type { Input } from '../resources/types.ts';
import type { SourceRecord } from './records.ts';

/** One JSON object per line (JSON Lines, also called NDJSON); blank lines are skipped. */
export async function* jsonlRecords(stream: Readable): AsyncGenerator<SourceRecord> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, '') : text);
    } catch (error) {
      yield { line, issues: [{ line, reason: `is not valid JSON (${(error as Error).message})` }] };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, issues: [{ line, reason: 'must be a JSON object' }] };
      continue;
    }
    yield { line, record: value as Input, issues: [] };
  }
}
