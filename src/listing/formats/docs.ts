import type { JsonSchema, ResourceDef } from '../resource.ts';
import { exportLayout, type CellType } from './columns.ts';
import { FORMATS } from './negotiate.ts';

const XLSX_CELL: Record<CellType, string> = {
  integer: 'number',
  number: 'number',
  money: 'number, format `#,##0.00`',
  datetime: 'date, format `yyyy-mm-dd hh:mm:ss` (UTC)',
  string: 'text',
  json: 'text (JSON)',
};

/** The export columns of a resource as a Markdown table (the OpenAPI description shows it; docs/listing-and-formats.md lists the columns too). */
export function exportColumnsTable(def: ResourceDef): string {
  const layout = exportLayout(def);
  const rows = layout.columns.map((c) => `| \`${c.name}\` | ${c.type} | ${XLSX_CELL[c.type]} |`);
  const per = def.exportRowPer ? ` One row per element of \`${def.exportRowPer}\`, with the ${def.title.toLowerCase()}'s own columns repeated on each.` : '';
  return `CSV and XLSX columns, in this order.${per}\n\n| column | type | XLSX cell |\n|---|---|---|\n${rows.join('\n')}`;
}

/** The 200 answer of the export operation in each of its formats, with their columns. */
export function exportResponseContent(def: ResourceDef): Record<string, { schema: JsonSchema }> {
  const names = exportLayout(def).columns.map((c) => c.name).join(', ');
  return {
    [FORMATS.ndjson.mediaType]: {
      schema: { type: 'string', description: 'NDJSON: one item per line, exactly as the JSON listing has it (nested values as objects), each line ending in LF.' },
    },
    [FORMATS.csv.mediaType]: {
      schema: { type: 'string', description: `RFC 4180 CSV, UTF-8, CRLF line ends, a header row: ${names} (or the \`fields\` and \`include\` asked).` },
    },
    [FORMATS.xlsx.mediaType]: {
      schema: { type: 'string', format: 'binary', description: `An XLSX workbook, one sheet named \`${def.collection}\`, a bold frozen header row: ${names}.` },
    },
  };
}
