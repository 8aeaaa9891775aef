import type { Registry } from '../resources/registry.ts';
import { categoryTreeTool } from './category-tree-tool.ts';
import { changesTool } from './changes-tool.ts';
import { collectionTools } from './collection-tools.ts';
import { generateTool } from './generate-tool.ts';
import { ownedValuesTools } from './owned-values-tools.ts';
import { snapshotTools } from './snapshot-tools.ts';
import type { McpTool } from './tool.ts';

/**
 * Every tool of the store: each declared collection's list_, get_ and search_ tools (so a new resource gets
 * them for free), the shapes a model needs beside them (the category tree, a product's parameter and filter
 * values), the changes feed, text generation and snapshots. Which of them a caller sees depends on its token's scopes.
 */
export function allTools(resources: Registry): McpTool[] {
  const tools = [
    ...collectionTools(resources.list),
    ...resources.list.map(categoryTreeTool).filter((t): t is McpTool => t !== undefined),
    ...ownedValuesTools(resources),
    changesTool(resources),
    generateTool,
    ...snapshotTools(resources),
  ];
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new Error(`two MCP tools are named ${t.name}`);
    names.add(t.name);
  }
  return tools;
}
