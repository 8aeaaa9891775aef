import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

// ExcelJS holds about 27 MB of a server's memory once loaded: the server imports it when a workbook is written.
describe('XLSX writer', () => {
  it('is not loaded with the server: ExcelJS is imported when the first workbook is written', () => {
    const script = `
      import { createRequire } from 'node:module';
      await import('./src/server.ts');
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/exceljs/'));
      const before = loaded();
      const { runExport } = await import('./src/listing/formats/export.ts');
      const { exportLayout } = await import('./src/listing/formats/columns.ts');
      const { products } = await import('./src/modules/products/resource.ts');
      const out = runExport({ format: 'xlsx', layout: exportLayout(products), csv: { delimiter: ',', bom: false, escapeFormulas: true }, rows: { kind: 'records', first: undefined, next: async () => undefined }, release: async () => {}, log: { info() {}, error() {} } });
      let bytes = 0;
      for await (const chunk of out) bytes += chunk.length;
      console.log(JSON.stringify({ before, after: loaded(), bytes }));
    `;
    const cwd = new URL('../../../', import.meta.url).pathname;
    const result = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd, encoding: 'utf8' }).trim().split('\n').pop()!) as { before: boolean; after: boolean; bytes: number };
    assert.equal(result.before, false, 'ExcelJS loaded with the server');
    assert.equal(result.after, true, 'the workbook was written by ExcelJS');
    assert.ok(result.bytes > 1000, `a workbook was written (${result.bytes} bytes)`);
  });
});
