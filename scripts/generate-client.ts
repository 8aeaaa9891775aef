// Generates src/client/schema.ts, the typed client's types, with openapi-typescript from the live OpenAPI
// document: the app built on an in-memory SQLite store with a fixed configuration, so that the output depends
// on the code only (never on a local .env). `npm run client:generate` writes it; `--check` (and the test
// test/client/schema.test.ts) fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { openStore } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

export const SCHEMA_FILE = join(dirname(fileURLToPath(import.meta.url)), '../src/client/schema.ts');
export const GENERATE_COMMAND = 'npm run client:generate';

/** The live document, as a fresh app on an empty in-memory store serves it at /api/v2/openapi.json. */
export async function liveDocument(): Promise<string> {
  const url = 'sqlite::memory:';
  const store = openStore(url);
  try {
    await migrateToLatest(store.db);
    // A fixed configuration (no process.env): only the code shapes the document.
    const config = loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: 'client-generator-admin-token-0123456789', PUBLIC_URL: 'http://localhost:3000' }, {});
    const app = await buildApp(await createContext(config, store), { logger: false });
    try {
      await app.ready();
      const res = await app.inject({ method: 'GET', url: '/api/v2/openapi.json' });
      if (res.statusCode !== 200) throw new Error(`GET /api/v2/openapi.json answered ${res.statusCode}: ${res.body}`);
      return res.body;
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}

/** The text of src/client/schema.ts for the live document. */
export async function generateSchemaSource(): Promise<string> {
  const text = await liveDocument();
  const ast = await openapiTS(text);
  const doc = JSON.parse(text) as { paths: Record<string, unknown> };
  // Types are erased at run time; the client needs to know this one thing of the paths as a value.
  const exportPaths = Object.keys(doc.paths).filter((p) => /^\/api\/v2\/[^/]+\/export$/.test(p));
  return (
    `${COMMENT_HEADER.trimEnd()}\n// Generated from the live OpenAPI document by \`${GENERATE_COMMAND}\` (scripts/generate-client.ts).\n\n` +
    `${astToString(ast)}\n/** The collections' export routes (\`/api/v2/{collection}/export\`). */\nexport const EXPORT_PATHS: readonly string[] = ${JSON.stringify(exportPaths)};\n`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fresh = await generateSchemaSource();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    if (committed !== fresh) {
      console.error(`src/client/schema.ts is stale: run \`${GENERATE_COMMAND}\` and commit it.`);
      process.exit(1);
    }
    console.log('src/client/schema.ts is up to date.');
  } else {
    writeFileSync(SCHEMA_FILE, fresh);
    console.log(`wrote ${SCHEMA_FILE}`);
  }
}
