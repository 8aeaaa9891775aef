import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { appRegistry } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { widgetMigrations } from '../resources/fixture/widgets/migration.ts';
import { widgets } from '../resources/fixture/widgets/resource.ts';
import { callError, callOk, connect, listen } from './client.ts';

/* A resource declared only in a test folder (test/resources/fixture/widgets) gets its MCP tools with no other edit. */
for (const dialect of await dialects()) {
  describe(`MCP tools of a resource declared only in a test folder (${dialect})`, () => {
    let t: TestApp;
    let client: Client;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect, { resources: appRegistry([widgets]), migrations: widgetMigrations, seed: { products: 2, seed: 5 } });
      for (const [sku, name, price] of [['W-1', 'Blue widget', '12.5'], ['W-2', 'Red widget', '7'], ['W-3', 'Spare part', '1.99']]) {
        assert.equal((await t.admin('POST', '/admin/api/widgets', { sku, name, price })).statusCode, 201);
      }
      token = (await t.credential(['widgets:read'])).token;
      client = await connect(await listen(t), token);
    });
    after(async () => {
      await client.close();
      await t.close();
    });

    it('list_widgets, get_widget and (its declaration has a q filter) search_widgets, listed with its scope, their filters described from the declaration, answering as the REST API', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), ['create_snapshot', 'get_snapshot', 'get_widget', 'list_widgets', 'search_widgets']);
      const list = tools.find((x) => x.name === 'list_widgets')!;
      for (const f of widgets.filters) {
        assert.equal((list.inputSchema.properties as Record<string, { description?: string }>)[f.name].description, f.description);
      }
      const page = await callOk(client, 'list_widgets', { limit: 2 });
      assert.deepEqual(page, (await t.get('/api/v2/widgets?limit=2', token)).json());
      const id = (page.data as Array<{ id: number }>)[0].id;
      assert.deepEqual(await callOk(client, 'get_widget', { id }), (await t.get(`/api/v2/widgets/${id}`, token)).json());
      assert.deepEqual(await callOk(client, 'search_widgets', { q: 'WIDGET' }), (await t.get('/api/v2/widgets?q=WIDGET&limit=20', token)).json());
      assert.equal(((await callOk(client, 'search_widgets', { q: 'WIDGET' })).data as unknown[]).length, 2);
      assert.equal((await callError(client, 'list_products')).code, 'insufficient_scope');
    });
  });
}
