// The client as an npm consumer gets it: built as `prepack` builds it (tsconfig.client.json), installed under
// node_modules/store-data-api with the repository's own package.json (its `exports`), and imported as
// `store-data-api/client` by the README's example, which must compile under `--strict` without a cast and run
// against a real server. Beside it, what the issue tried: plain openapi-typescript output with openapi-fetch's
// `createClient<paths>()` and the default media type.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { liveDocument } from '../../scripts/generate-client.ts';
import { createTestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A document's client example: the ```ts block after its `client-example` marker. */
function exampleOf(file: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const match = /<!-- client-example[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(text);
  assert.ok(match, `${file} has a \`\`\`ts block after <!-- client-example -->`);
  return match[1];
}

interface Diagnostic {
  file: string;
  line: number;
  text: string;
}

/** Compiles `files` with `options` (strict always), emitting unless `noEmit`; the diagnostics, with file and line. */
function compile(files: string[], options: ts.CompilerOptions): Diagnostic[] {
  const program = ts.createProgram(files, { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, ...options });
  const emitted = options.noEmit ? undefined : program.emit();
  return [...ts.getPreEmitDiagnostics(program), ...(emitted?.diagnostics ?? [])].map((d) => ({
    file: d.file?.fileName.split('/').pop() ?? '',
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    text: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}

/** Runs `node script` without blocking this process (the server under test lives in it). */
function runNode(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** A temp project with node_modules/store-data-api built from this checkout, and the client's runtime dependencies. */
function consumerProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-client-consumer-'));
  const pkg = join(dir, 'node_modules/store-data-api');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  // Built exactly as `npm run build:client` (prepack) builds it, into the installed copy.
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.client.json'), { outDir: join(pkg, 'dist/client') }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)) });
  assert.ok(config);
  const program = ts.createProgram(config.fileNames, config.options);
  const result = program.emit();
  const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  assert.deepEqual(problems.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'the client builds');
  for (const dep of ['openapi-fetch', 'openapi-typescript-helpers', '@types']) symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  return dir;
}

describe('the client package, as a consumer compiles and runs it', () => {
  let dir: string;
  before(() => {
    dir = consumerProject();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ships JavaScript and declarations under the package\'s ./client export', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }>; files: string[]; scripts: Record<string, string> };
    assert.deepEqual(pkg.exports['./client'], { types: './dist/client/index.d.ts', default: './dist/client/index.js' });
    assert.ok(pkg.files.includes('dist/client/'), 'dist/ is git-ignored, so `files` must name it for npm pack');
    assert.match(pkg.scripts.prepack, /build:client/);
    // The command's build too (bin/app-build.js): a package without it runs its sources through tsx.
    assert.ok(pkg.files.includes('dist/app/'), 'npm pack must ship the build the command runs');
    assert.match(pkg.scripts.prepack, /build:app/);
  });

  it('compiles the README\'s and docs/client.md\'s examples under --strict with no cast, and refuses misuse at compile time', () => {
    const example = exampleOf('README.md');
    const guide = exampleOf('docs/client.md');
    for (const code of [example, guide]) {
      assert.doesNotMatch(code, /\bas\s+(?:unknown|any|[A-Z{[])|[\w)\]]!(?=[.;,)\s])/, 'no casts or non-null assertions');
      assert.match(code, /from 'store-data-api\/client'/);
    }
    writeFileSync(join(dir, 'example.ts'), example);
    writeFileSync(join(dir, 'guide.ts'), guide);
    writeFileSync(
      join(dir, 'misuse.ts'),
      [
        "import { createStoreClient } from 'store-data-api/client';",
        "const store = createStoreClient({ baseUrl: 'http://127.0.0.1:3000', clientId: 'id', clientSecret: 'secret' });",
        "for await (const p of store.list('no-such-collection')) console.log(p);",
        "for await (const p of store.list('brands', { query: { status: 'active' } })) console.log(p);",
        "const product = await store.get('products', 1);",
        'const n: number = product.name;',
        "await store.export('products', { format: 'pdf' });",
        'console.log(n);',
      ].join('\n'),
    );
    // The default libraries (DOM included) with @types/node, as most projects have them (and skipLibCheck, as
    // `tsc --init` sets it; the declarations themselves are checked by the second compilation).
    const found = compile([join(dir, 'example.ts'), join(dir, 'guide.ts'), join(dir, 'misuse.ts')], { noEmit: true, skipLibCheck: true });
    assert.deepEqual(found.filter((d) => d.file !== 'misuse.ts'), [], 'the README\'s and docs/client.md\'s examples compile');
    // An unknown collection, a filter of another collection, a wrong field type, an unknown format.
    assert.deepEqual([...new Set(found.map((d) => d.line))].sort(), [3, 4, 6, 7], JSON.stringify(found, null, 1));
    // Node's types alone (no DOM), every declaration checked: compiled for the run below.
    assert.deepEqual(compile([join(dir, 'example.ts')], { lib: ['lib.es2022.d.ts'], types: ['node'], outDir: join(dir, 'out') }), []);
  });

  it('runs the README example against a real server: every active product, the CSV file, the typed 404', async () => {
      for (const dialect of await dialects()) {
        const t = await createTestApp(dialect, { seed: { products: 60 } });
        try {
          await t.app.listen({ port: 0, host: '127.0.0.1' });
          const { clientId, clientSecret, token } = await t.credential(['products:read']);
          const active = (await t.get('/api/v2/products?status=active&limit=1000', token)).json().data as unknown[];
          const all = (await t.get('/api/v2/products?limit=1000', token)).json().data as unknown[];
          const run = await runNode(join(dir, 'out/example.js'), dir, { STORE_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, CLIENT_ID: clientId, CLIENT_SECRET: clientSecret });
          assert.equal(run.code, 0, `${dialect}: ${run.stderr}`);
          assert.equal(run.stdout.trim().split('\n').length, active.length, `${dialect}: one line per active product`);
          const csv = readFileSync(join(dir, 'products.csv'), 'utf8').trim().split(/\r?\n/);
          assert.equal(csv.length, 1 + all.length, `${dialect}: every product in the file`);
          assert.match(csv[0], /^id;/, 'the delimiter asked for');
          assert.match(run.stderr, /^404 not_found /m);
        } finally {
          await t.close();
        }
      }
  });
});

describe('plain openapi-typescript output with openapi-fetch (the default media type)', async () => {
  const doc = JSON.parse(await liveDocument()) as { paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }> };
  const listingTypes = Object.keys(doc.paths['/api/v2/products'].get?.responses['200'].content ?? {});
  // Engineer L makes each listing's documented 200 JSON-only (exports move to /export); until then this is a known failure.
  const todo = listingTypes.length > 1 ? `the listing's 200 still offers ${listingTypes.join(', ')}` : undefined;

  it('compiles GET /api/v2/products and data.data[0].name under --strict', { todo }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-plain-openapi-'));
    try {
      writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(JSON.stringify(doc))));
      writeFileSync(
        join(dir, 'main.ts'),
        [
          "import createClient from 'openapi-fetch';",
          "import type { paths } from './schema.js';",
          "const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { authorization: 'Bearer token' } });",
          "const { data, error } = await client.GET('/api/v2/products', { params: { query: { limit: 10, status: 'active' } } });",
          'if (error) throw new Error(error.detail);',
          'const name: string = data.data[0].name;',
          'const next: string | null = data.pagination.nextCursor;',
          'console.log(name, next);',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      assert.deepEqual(compile([join(dir, 'main.ts')], { noEmit: true, skipLibCheck: true }), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
