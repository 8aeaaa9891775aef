import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { snake } from '../../src/mcp/tool.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { callError, callOk, connect, listen } from './client.ts';

interface Page {
  data: Array<Record<string, unknown>>;
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
}

interface TreeNode {
  id: number;
  parentId: number | null;
  childCount: number;
  children: TreeNode[];
}

for (const dialect of await dialects()) {
  describe(`MCP tools answer what the REST API answers (${dialect})`, () => {
    let t: TestApp;
    let client: Client;
    let token: string;
    let base: string;
    const rest = async (url: string) => {
      const res = await t.get(url, token);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json();
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 40, orders: 6, seed: 3 }, env: { AI_RATE_LIMIT_RPS: '1000', AI_RATE_LIMIT_BURST: '1000' } });
      token = (await t.credential([...ALL_SCOPES])).token;
      base = await listen(t);
      client = await connect(base, token);
    });
    after(async () => {
      await client.close();
      await t.close();
    });

    it('list_<collection> and get_<resource> of every declared collection: the same page and item', async () => {
      for (const def of t.ctx.resources.list) {
        const page = (await callOk(client, `list_${snake(def.collection)}`, { limit: 3 })) as unknown as Page;
        assert.deepEqual(page, await rest(`/api/v2/${def.collection}?limit=3`), def.collection);
        assert.equal(page.data.length, 3, def.collection);
        // The next page through the tool's cursor is the REST API's next page too.
        const next = await callOk(client, `list_${snake(def.collection)}`, { cursor: page.pagination.nextCursor, limit: 3 });
        assert.deepEqual(next, await rest(`/api/v2/${def.collection}?limit=3&cursor=${encodeURIComponent(page.pagination.nextCursor!)}`), def.collection);
        const id = page.data[1].id as number;
        assert.deepEqual(await callOk(client, `get_${snake(def.event)}`, { id }), await rest(`/api/v2/${def.collection}/${id}`), def.event);
        const missing = await callError(client, `get_${snake(def.event)}`, { id: 99_999_999 });
        assert.equal(missing.code, 'not_found');
        assert.equal(missing.status, 404);
      }
    });

    it('filters and sorts mean what they mean on the REST listing; a number where text is declared is read as text', async () => {
      const brandId = ((await rest('/api/v2/products?limit=1')) as Page).data[0].brandId as number;
      const filtered = await callOk(client, 'list_products', { brandId, status: 'active,draft', sort: '-updatedAt', limit: 10 });
      assert.deepEqual(filtered, await rest(`/api/v2/products?brandId=${brandId}&status=active,draft&sort=-updatedAt&limit=10`));
      const orders = await callOk(client, 'list_orders', { status: 'shipped,delivered,paid', limit: 5 });
      assert.deepEqual(orders, await rest('/api/v2/orders?status=shipped,delivered,paid&limit=5'));
    });

    it('fields and include shape items as on the REST API, and each include needs its own scope', async () => {
      const shaped = (await callOk(client, 'list_products', { fields: ['name', 'price', 'brand.name'], include: ['brand', 'parameters'], limit: 4 })) as unknown as Page;
      assert.deepEqual(shaped, await rest('/api/v2/products?fields=name,price,brand.name&include=brand,parameters&limit=4'));
      assert.deepEqual(Object.keys(shaped.data[0]).sort(), ['brand', 'id', 'name', 'parameters', 'price']);
      // The cursor keeps the shape.
      const next = (await callOk(client, 'list_products', { cursor: shaped.pagination.nextCursor, limit: 4 })) as unknown as Page;
      assert.deepEqual(Object.keys(next.data[0]).sort(), ['brand', 'id', 'name', 'parameters', 'price']);
      const order = ((await rest('/api/v2/orders?limit=1')) as Page).data[0].id as number;
      assert.deepEqual(await callOk(client, 'get_order', { id: order, include: ['products'], fields: ['number', 'items'] }), await rest(`/api/v2/orders/${order}?include=products&fields=number,items`));
      assert.deepEqual(await callOk(client, 'get_product', { id: 2, include: ['category'] }), await rest('/api/v2/products/2?include=category'));

      const bad = await callError(client, 'list_products', { fields: ['nope'] });
      assert.equal(bad.code, 'invalid_parameter');
      assert.ok(bad.errors?.some((e) => e.name === 'fields' && e.reason.includes('articleNumber')), JSON.stringify(bad));
      const narrow = await connect(base, (await t.credential(['products:read'])).token);
      for (const [name, args] of [['list_products', { include: ['brand'] }], ['get_product', { id: 1, include: ['brand'] }]] as const) {
        const refused = await callError(narrow, name, args);
        assert.equal(refused.code, 'insufficient_scope', name);
        assert.match(refused.detail, /brands:read/);
      }
      await narrow.close();
    });

    it('search_products is the q filter', async () => {
      const name = String(((await rest('/api/v2/products?limit=1')) as Page).data[0].name);
      const word = name.split(' ')[1].toUpperCase();
      const found = (await callOk(client, 'search_products', { q: word, limit: 50 })) as unknown as Page;
      assert.deepEqual(found, await rest(`/api/v2/products?q=${encodeURIComponent(word)}&limit=50`));
      assert.ok(found.data.length > 0);
      const missing = await callError(client, 'search_products', {});
      assert.equal(missing.code, 'invalid_parameter');
      assert.ok(missing.errors?.some((e) => e.name === 'q'));
    });

    it('a bad filter value, sort, limit or cursor is a tool error with the API\'s problem', async () => {
      const restProblem = (await t.get('/api/v2/products?status=bogus', token)).json() as { code: string; detail: string; errors: unknown };
      const problem = await callError(client, 'list_products', { status: 'bogus' });
      assert.equal(problem.code, restProblem.code);
      assert.equal(problem.detail, restProblem.detail);
      assert.deepEqual(problem.errors, restProblem.errors);
      for (const [args, name] of [[{ sort: 'price' }, 'sort'], [{ limit: 101 }, 'limit'], [{ limit: 0 }, 'limit'], [{ cursor: 'forged' }, 'cursor'], [{ unknown: 'x' }, 'unknown'], [{ categoryId: 'abc' }, 'categoryId']] as const) {
        const p = await callError(client, 'list_products', args);
        assert.equal(p.status, 400, JSON.stringify(args));
        assert.ok(p.errors?.some((e) => e.name === name), `${JSON.stringify(args)}: ${JSON.stringify(p)}`);
      }
      const listed = (await callOk(client, 'list_products', { status: 'active', limit: 1 })) as unknown as Page;
      const mismatch = await callError(client, 'list_products', { status: 'draft', cursor: listed.pagination.nextCursor });
      assert.equal(mismatch.code, 'cursor_mismatch');
    });

    it('get_product_parameters and get_product_filters: a product\'s values, as the REST listings filtered by productId', async () => {
      const productId = 5;
      assert.deepEqual(await callOk(client, 'get_product_parameters', { productId }), await rest(`/api/v2/product-parameters?productId=${productId}&limit=100`));
      assert.deepEqual(await callOk(client, 'get_product_filters', { productId }), await rest(`/api/v2/product-filters?productId=${productId}&limit=100`));
      const params = (await callOk(client, 'get_product_parameters', { productId })) as unknown as Page;
      assert.ok(params.data.length > 0 && params.data.every((v) => v.productId === productId));
      assert.equal((await callError(client, 'get_product_parameters', { productId: 99_999 })).code, 'not_found');
    });

    it('get_category_tree is the categories of the REST API as a tree, bounded and marked when cut', async () => {
      const all = ((await rest('/api/v2/categories?limit=1000')) as Page).data;
      const childrenOf = (id: number | null) => all.filter((c) => c.parentId === id);
      const whole = (await callOk(client, 'get_category_tree', { maxDepth: 10, maxNodes: 500 })) as { roots: TreeNode[]; nodeCount: number; truncated: boolean };
      assert.equal(whole.truncated, false);
      assert.equal(whole.nodeCount, all.length);
      const check = (nodes: TreeNode[], parent: number | null) => {
        assert.deepEqual(nodes.map((n) => n.id).sort((a, b) => a - b), childrenOf(parent).map((c) => c.id as number).sort((a, b) => a - b));
        for (const n of nodes) {
          assert.equal(n.childCount, childrenOf(n.id).length);
          check(n.children, n.id);
        }
      };
      check(whole.roots, null);

      // One level: every root says it has children that are not given.
      const shallow = (await callOk(client, 'get_category_tree', { maxDepth: 1 })) as { roots: TreeNode[]; truncated: boolean };
      assert.equal(shallow.truncated, true);
      assert.ok(shallow.roots.every((r) => r.children.length === 0) && shallow.roots.some((r) => r.childCount > 0));
      // A size cap: exactly that many nodes, marked.
      const small = (await callOk(client, 'get_category_tree', { maxNodes: 3 })) as { nodeCount: number; truncated: boolean };
      assert.equal(small.nodeCount, 3);
      assert.equal(small.truncated, true);
      // A subtree.
      const root = whole.roots.find((r) => r.childCount > 0)!;
      const sub = (await callOk(client, 'get_category_tree', { rootId: root.id })) as { roots: TreeNode[] };
      assert.deepEqual(sub.roots.map((r) => r.id), [root.id]);
      assert.equal(sub.roots[0].children.length, root.childCount);
      assert.equal((await callError(client, 'get_category_tree', { rootId: 99_999 })).code, 'not_found');
      assert.equal((await callError(client, 'get_category_tree', { maxDepth: 11 })).code, 'invalid_parameter');
    });

    it('list_changes pages through the feed as GET /api/v2/changes does', async () => {
      const first = (await callOk(client, 'list_changes', { after: 0, limit: 20 })) as unknown as Page;
      assert.deepEqual(first, await rest('/api/v2/changes?after=0&limit=20'));
      assert.equal(first.pagination.hasMore, true);
      const next = await callOk(client, 'list_changes', { after: Number(first.pagination.nextCursor), limit: 20 });
      assert.deepEqual(next, await rest(`/api/v2/changes?after=${first.pagination.nextCursor}&limit=20`));
    });

    it('generate_text writes what POST /api/v2/ai/generate writes, and its refusals are tool errors with the problem\'s detail', async () => {
      for (const body of [{ task: 'seo-title', productId: 3 }, { task: 'product-description', productId: 4, language: 'cs' }, { task: 'summary', productId: 2, prompt: '3 bullet points' }]) {
        const viaRest = await t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', headers: { authorization: `Bearer ${token}` }, payload: body });
        assert.equal(viaRest.statusCode, 200, viaRest.body);
        assert.deepEqual(await callOk(client, 'generate_text', body), viaRest.json());
      }
      for (const body of [{ task: 'translate', text: 'The quick brown fox jumps over the lazy dog', language: 'de' }, { prompt: 'Write an Instagram caption with emojis', productId: 3 }]) {
        const viaRest = await t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', headers: { authorization: `Bearer ${token}` }, payload: body });
        assert.equal(viaRest.statusCode, 422, viaRest.body);
        const problem = await callError(client, 'generate_text', body);
        assert.equal(problem.code, viaRest.json().code);
        assert.equal(problem.detail, viaRest.json().detail);
      }
      assert.equal((await callError(client, 'generate_text', { language: 'en' })).code, 'invalid_parameter');
      assert.equal((await callError(client, 'generate_text', { task: 'seo-title', productId: 99_999 })).code, 'not_found');
    });
  });
}
