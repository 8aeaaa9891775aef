import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportLayout, itemOf, type ExportLayout, type ExportRecord } from '../../../src/listing/formats/columns.ts';
import { lineEncoder } from '../../../src/listing/formats/ndjson.ts';
import { resolveShape } from '../../../src/listing/shape.ts';
import { appRegistry } from '../../../src/modules/registry.ts';

// NDJSON lines are written by lineEncoder rather than JSON.stringify of an item object (faster); these tests
// hold it to exactly the bytes JSON.stringify(itemOf(…)) gives, for every resource and every kind of value.

/** Values of every kind JSON.stringify treats apart: escapes, surrogates, number forms, null and undefined, objects. */
const VALUES: unknown[] = [
  1, 0, -0, 42.5, 0.1 + 0.2, 1e21, 1e-7, -123456789012, NaN, Infinity, -Infinity,
  '', 'plain', 'quote " and backslash \\', 'tab\tnew\nline\rcr\bback\fform', '\u0000\u001f\u007f', 'café Žluťoučký 中文',
  'emoji 😀', 'lone \uD800 high', 'lone \uDC00 low', 'line sep \u2028 para \u2029', '2026-11-23T10:11:12.123Z', '123.45',
  null, undefined, true, false,
  { city: 'Praha', zip: '110 00', note: 'a "b"' }, [{ sku: 'A-1', quantity: 2, total: '10.50' }], [], {}, new Date(Date.UTC(2026, 10, 23)),
];

function recordsFor(layout: ExportLayout, count: number): ExportRecord[] {
  const width = layout.selected.length + layout.nestedKeys.length + layout.includeKeys.length;
  const records: ExportRecord[] = [];
  for (let r = 0; r < count; r++) records.push(Array.from({ length: width }, (_v, i) => VALUES[(r * 7 + i * 3) % VALUES.length]));
  return records;
}

const same = (layout: ExportLayout, records: ExportRecord[]): void => {
  const encode = lineEncoder(layout);
  for (const record of records) assert.equal(encode(record), JSON.stringify(itemOf(layout, record)));
};

describe('NDJSON line encoder', () => {
  it('writes exactly JSON.stringify of the item, for every resource, with and without its includes and trimmed fields', () => {
    for (const def of appRegistry().byCollection.values()) {
      const includes = Object.keys(def.includes);
      const shapes = [
        resolveShape(def, undefined),
        resolveShape(def, { fields: [def.fields[def.fields.length - 1].name] }),
        resolveShape(def, { include: includes }),
      ];
      for (const shape of shapes) same(exportLayout(def, shape), recordsFor(exportLayout(def, shape), VALUES.length * 3));
    }
  });

  it('leaves out a property whose value is undefined, also the first one, as JSON.stringify does', () => {
    const layout = exportLayout(appRegistry().byCollection.get('product-parameters')!);
    const width = layout.selected.length;
    same(layout, [new Array(width).fill(undefined), [undefined, 1, ...new Array(width - 2).fill(undefined)], [undefined, () => 1, Symbol('s'), 'x']]);
    assert.equal(lineEncoder(layout)(new Array(width).fill(undefined)), '{}');
  });

  it('throws on a bigint as JSON.stringify does', () => {
    const layout = exportLayout(appRegistry().byCollection.get('product-parameters')!);
    assert.throws(() => lineEncoder(layout)([1n]), TypeError);
  });

  it('keeps the order and the keys an object would have where names are index-like, repeated or __proto__', () => {
    const def = appRegistry().byCollection.get('product-parameters')!;
    const base = exportLayout(def);
    for (const names of [['id', '2', 'value', '1'], ['id', 'value', 'id'], ['id', '__proto__', 'value']]) {
      const shown = names.map((name, i) => ({ ...base.selected[i], name }));
      const layout: ExportLayout = { ...base, shape: { ...base.shape, shown, hidden: [] }, selected: shown, nestedKeys: [], includeKeys: [] };
      same(layout, [[1, 'a', 'b', 'c'], [2, { x: 1 }, null, 'd']]);
    }
  });
});
