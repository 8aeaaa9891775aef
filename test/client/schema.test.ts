// The committed client types (src/client/schema.ts) are what openapi-typescript makes of the live document
// today: a route or schema changed without regenerating fails here, with the command that fixes it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { GENERATE_COMMAND, SCHEMA_FILE, generateSchemaSource } from '../../scripts/generate-client.ts';

describe('the typed client\'s generated schema', () => {
  it('equals a fresh generation from the live OpenAPI document', async () => {
    const fresh = await generateSchemaSource();
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      assert.fail(`src/client/schema.ts is stale (first difference at line ${line + 1}: ${JSON.stringify(a[line])} ≠ ${JSON.stringify(b[line])}). Run \`${GENERATE_COMMAND}\` and commit the file.`);
    }
  });

  it('lists every collection\'s listing and item path, with operation ids', () => {
    const text = readFileSync(SCHEMA_FILE, 'utf8');
    for (const name of ['products', 'categories', 'brands', 'product-parameters', 'product-filters', 'orders']) {
      assert.match(text, new RegExp(`"/api/v2/${name}": \\{`), name);
      assert.match(text, new RegExp(`"/api/v2/${name}/\\{id\\}": \\{`), `${name}/{id}`);
    }
    for (const id of ['listProducts', 'getProduct', 'createToken', 'adminCreateProduct']) assert.match(text, new RegExp(`\\b${id}: \\{`), id);
  });
});
