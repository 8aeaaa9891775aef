import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ALL_SCOPES, type Scope } from '../../src/auth/scopes.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { callError, callOk, connect, listen } from './client.ts';

/** The tools of each scope: what a token holding only that scope sees. */
const BY_SCOPE: Record<Scope, string[]> = {
  'products:read': ['search_products', 'list_products', 'get_product'],
  'categories:read': ['list_categories', 'get_category', 'get_category_tree'],
  'brands:read': ['list_brands', 'get_brand'],
  'product-parameters:read': ['list_product_parameters', 'get_product_parameter', 'get_product_parameters'],
  'product-filters:read': ['list_product_filters', 'get_product_filter', 'get_product_filters'],
  'orders:read': ['list_orders', 'get_order'],
  'ai:generate': ['generate_text'],
  'changes:read': ['list_changes'],
};

/** The snapshot tools come with any collection's read scope (the collection asked decides). */
const SNAPSHOT_TOOLS = ['create_snapshot', 'get_snapshot'];

const namesFor = (scopes: Scope[]) => [...scopes.flatMap((s) => BY_SCOPE[s]), ...(scopes.some((s) => s.endsWith(':read') && s !== 'changes:read') ? SNAPSHOT_TOOLS : [])].sort();

for (const dialect of await dialects()) {
  describe(`MCP tools by scope (${dialect})`, () => {
    let t: TestApp;
    let base: string;
    const clients: Client[] = [];
    const open = async (scopes: Scope[]) => {
      const client = await connect(base, (await t.credential(scopes)).token);
      clients.push(client);
      return client;
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 5, orders: 3, seed: 1 } });
      base = await listen(t);
    });
    after(async () => {
      for (const c of clients) await c.close();
      await t.close();
    });

    it('every scope of the catalogue has tools, and a token sees exactly the tools of its scopes', async () => {
      assert.deepEqual(Object.keys(BY_SCOPE).sort(), [...ALL_SCOPES].sort());
      for (const scopes of [[...ALL_SCOPES], ['products:read'], ['orders:read'], ['categories:read', 'brands:read'], ['changes:read', 'ai:generate'], ALL_SCOPES.filter((s) => s !== 'orders:read')] as Scope[][]) {
        const { tools } = await (await open(scopes)).listTools();
        assert.deepEqual(tools.map((x) => x.name).sort(), namesFor(scopes), scopes.join(' '));
      }
    });

    it('each listed tool has a description for a model, input and output schemas, and a read-only hint', async () => {
      const { tools } = await (await open([...ALL_SCOPES])).listTools();
      for (const tool of tools) {
        assert.ok((tool.description ?? '').length > 80, tool.name);
        assert.match(tool.description ?? '', /Needs (scope `[a-z:-]+`|the collection's read scope)/, tool.name);
        assert.equal(tool.inputSchema.type, 'object');
        assert.equal(tool.outputSchema?.type, 'object', tool.name);
        assert.equal(tool.annotations?.readOnlyHint, tool.name !== 'create_snapshot', tool.name);
      }
      const list = tools.find((x) => x.name === 'list_products')!;
      const props = list.inputSchema.properties as Record<string, { description?: string; maximum?: number }>;
      // The listing's filters with their declared descriptions, and paging.
      for (const name of ['q', 'name', 'articleNumber', 'status', 'brandId', 'categoryId', 'includeSubcategories', 'updatedSince', 'ids', 'sort', 'limit', 'cursor', 'fields', 'include']) assert.ok(props[name], name);
      assert.match(props.q.description ?? '', /substring of the name or the article number/);
      assert.equal(props.limit.maximum, 100);
      assert.match(list.description ?? '', /nextCursor/);
      assert.deepEqual(tools.find((x) => x.name === 'search_products')!.inputSchema.required, ['q']);
    });

    it('a token without orders:read neither lists nor calls the order tools, and is told which scope they need', async () => {
      const client = await open(ALL_SCOPES.filter((s) => s !== 'orders:read'));
      const names = (await client.listTools()).tools.map((x) => x.name);
      assert.ok(!names.includes('list_orders') && !names.includes('get_order'));
      for (const [name, args] of [['list_orders', {}], ['get_order', { id: 1 }]] as const) {
        const problem = await callError(client, name, args);
        assert.equal(problem.code, 'insufficient_scope');
        assert.equal(problem.status, 403);
        assert.match(problem.detail, /orders:read/);
        assert.match(problem.detail, new RegExp(name));
      }
      // The same token still reads what it may.
      assert.ok(Array.isArray((await callOk(client, 'list_products', { limit: 1 })).data));
    });

    it('the changes a token sees through list_changes are only of resources it may read', async () => {
      const client = await open(['changes:read', 'brands:read']);
      const { data } = (await callOk(client, 'list_changes', { limit: 100 })) as { data: Array<{ resource: string }> };
      assert.ok(data.length > 0);
      assert.deepEqual([...new Set(data.map((e) => e.resource))], ['brand']);
    });

    it('generate_text with a productId needs products:read as well', async () => {
      const client = await open(['ai:generate']);
      const problem = await callError(client, 'generate_text', { task: 'seo-title', productId: 1 });
      assert.equal(problem.code, 'insufficient_scope');
      assert.match(problem.detail, /products:read/);
    });

    it('an unknown tool is a tool error, not a crash', async () => {
      const client = await open(['products:read']);
      assert.equal((await callError(client, 'drop_tables')).code, 'not_found');
    });
  });
}
