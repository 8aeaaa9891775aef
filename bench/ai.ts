// `npm run bench:ai [-- --duration 10 --connections 10 --generations 300 --only builtin|llama --out FILE]`: text generation (issue 5).
//   - the built-in engine over HTTP: requests/s and p99 per task (autocannon in its own process, the API in another);
//   - the llama engine on the test model (a GGUF bigram model the tests write): tokens/s in-process, per thread
//     count, and requests/s over HTTP. Needs node-llama-cpp (docs/text-generation.md); skipped without it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerateInput } from '../src/ai/engine.ts';
import { loadLlamaBindings } from '../src/ai/engines/llama-bindings.ts';
import { llamaEngine } from '../src/ai/engines/llama.ts';
import { loadConfig } from '../src/config.ts';
import { buildBigramModel } from '../test/ai/fixtures/bigram-model.ts';
import { numberOption, parseArgs } from './lib/args.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { freePort } from './lib/ports.ts';
import { runMeasured, startServer, type Server } from './lib/processes.ts';
import { round, table } from './lib/report.ts';

const NODE = process.execPath;
const CLI = 'bin/store-api.js';
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Options {
  connections: number;
  duration: number;
  warmup: number;
  generations: number;
  only?: 'builtin' | 'llama';
  out?: string;
}

async function startApi(url: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  return startServer('api', NODE, [CLI, '--database', url, 'serve'], {
    HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn',
    AI_RATE_LIMIT_RPS: '1000000', AI_RATE_LIMIT_BURST: '1000000', ADMIN_TOKEN: 'bench-admin-token-0123456789abcdefghij', ...env,
  }, `http://127.0.0.1:${port}/healthz`);
}

async function tokenFor(api: Server, url: string): Promise<string> {
  const credential = JSON.parse((await runMeasured(NODE, [CLI, '--database', url, 'credentials', 'create', '--name', 'bench-ai', '--scopes', 'ai:generate,products:read', '--json'])).stdout) as { clientId: string; clientSecret: string };
  const res = await fetch(`${api.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=${credential.clientId}&client_secret=${encodeURIComponent(credential.clientSecret)}`,
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function load(api: Server, token: string, body: object, o: Options): Promise<LoadResult> {
  const result = await runLoad({
    url: `${api.url}/api/v2/ai/generate`, method: 'POST', body: JSON.stringify(body),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    connections: o.connections, duration: o.duration, warmup: o.warmup,
  });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors: ${JSON.stringify(body)}`);
  return result;
}

async function llamaThroughput(modelPath: string, threads: number, generations: number) {
  const engine = await llamaEngine(loadConfig({ AI_ENGINE: 'llama', AI_MODEL_PATH: modelPath, AI_THREADS: String(threads) }, {}).ai, { warn: () => {}, error: say });
  const input: GenerateInput = {
    task: 'product-description', prompt: undefined, text: undefined, language: 'en', maxTokens: 256, temperature: 0, signal: new AbortController().signal,
    product: {
      id: 1, name: 'Nordwerk Compact Cordless Drill K123', articleNumber: 'SKU-0000001', description: null, status: 'active', price: '1299.00', currency: 'CZK',
      vatRate: 21, stock: 12, weight: 1.2, ean: null, url: null, brand: { name: 'Nordwerk', description: null }, categoryPath: ['Power Tools', 'Drills'],
      parameters: [{ name: 'Voltage', value: '18', unit: 'V' }, { name: 'Weight', value: '1.2', unit: 'kg' }], filters: [{ name: 'Colour', value: 'red' }],
    },
  };
  interface Run { ms: number; firstMs: number; promptTokens: number; completionTokens: number }
  const once = async (): Promise<Run> => {
    const started = performance.now();
    let firstAt = 0;
    const run = engine.generate(input);
    for (let step = await run.next(); ; step = await run.next()) {
      if (step.done) return { ms: performance.now() - started, firstMs: firstAt - started, ...step.value.usage };
      firstAt ||= performance.now();
    }
  };
  await once(); // loads the model
  const runs: Run[] = [];
  const started = performance.now();
  // At most `generations`, and no more than 20 s once 5 are done: an oversubscribed setting can be very slow.
  while (runs.length < generations && (runs.length < 5 || performance.now() - started < 20_000)) runs.push(await once());
  const seconds = (performance.now() - started) / 1000;
  await engine.close();
  const sum = (f: (r: Run) => number) => runs.reduce((s, r) => s + f(r), 0);
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  return {
    threads,
    generationsPerSec: round(runs.length / seconds, 1),
    promptTokens: round(sum((r) => r.promptTokens) / runs.length),
    completionTokens: round(sum((r) => r.completionTokens) / runs.length),
    tokensPerSec: round(sum((r) => r.promptTokens + r.completionTokens) / seconds),
    completionTokensPerSec: round(sum((r) => r.completionTokens) / seconds),
    firstTokenMs: round(sum((r) => r.firstMs) / runs.length, 1),
    p99Ms: round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], 1),
  };
}

export async function runAi(o: Options): Promise<void> {
  const lines: string[] = [`# Text generation benchmark`, '', `${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}, ${new Date().toISOString()}`, ''];
  const dir = mkdtempSync(join(tmpdir(), 'store-api-bench-ai-'));
  const url = `sqlite:${join(dir, 'store.db')}`;
  try {
    say('== seeding 1000 products (SQLite)');
    await runMeasured(NODE, [CLI, '--database', url, 'seed', '--products', '1000', '--json']);

    if (o.only !== 'llama') await builtinOverHttp(url, o, lines);
    if (o.only !== 'builtin') await llama(url, dir, o, lines);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const report = lines.join('\n');
  if (o.out) writeFileSync(o.out, report);
  say(`\n${report}`);
}

async function builtinOverHttp(url: string, o: Options, lines: string[]): Promise<void> {
  say('== built-in engine over HTTP');
  const api = await startApi(url, {});
  const token = await tokenFor(api, url);
  const rows: Array<Array<string | number>> = [];
  const cases: Array<[string, object]> = [
    ['product-description (en)', { task: 'product-description', productId: 42 }],
    ['product-description (cs)', { task: 'product-description', productId: 42, language: 'cs' }],
    ['seo-title (de)', { task: 'seo-title', productId: 42, language: 'de' }],
    ['seo-description (sk)', { task: 'seo-description', productId: 42, language: 'sk' }],
    ['summary (en), streamed', { task: 'summary', productId: 42, stream: true }],
    ['translate (cs)', { task: 'translate', text: 'Colour: red. Weight: 1.2 kg. Material: stainless steel.', language: 'cs' }],
  ];
  for (const [name, body] of cases) {
    const r = await load(api, token, body, o);
    say(`  ${name}: ${round(r.rps)} req/s, p99 ${r.p99} ms`);
    rows.push([name, round(r.rps), r.p50, r.p99]);
  }
  await api.stop();
  lines.push(`## Built-in engine, POST /api/v2/ai/generate (${o.connections} connections, ${o.duration} s)`, '', table(['request', 'req/s', 'p50 ms', 'p99 ms'], rows), '');
}

async function llama(url: string, dir: string, o: Options, lines: string[]): Promise<void> {
  try {
    await loadLlamaBindings();
  } catch (error) {
    say(`== llama engine skipped: ${(error as Error).message}`);
    lines.push('## llama engine', '', `Skipped: ${(error as Error).message}`, '');
    return;
  }
  const modelPath = join(dir, 'bigram-test.gguf');
  const bytes = buildBigramModel().write(modelPath);
  say(`== llama engine on the test model (${round(bytes / 1024)} KB), ${o.generations} product descriptions in-process`);
  const llamaRows: Array<Array<string | number>> = [];
  // 1, every core, and node-llama-cpp's own default (at least 4 threads on a CPU).
  for (const threads of [...new Set([1, availableParallelism(), Math.max(4, availableParallelism())])]) {
    const r = await llamaThroughput(modelPath, threads, o.generations);
    say(`  ${threads} thread(s): ${r.tokensPerSec} tokens/s (prompt + completion), ${r.completionTokensPerSec} completion tokens/s, ${r.generationsPerSec} generations/s`);
    llamaRows.push([r.threads, r.tokensPerSec, r.completionTokensPerSec, r.generationsPerSec, r.promptTokens, r.completionTokens, r.firstTokenMs, r.p99Ms]);
  }
  lines.push(`## llama engine, test model (${round(bytes / 1024)} KB GGUF), in-process`, '',
    table(['threads', 'tokens/s', 'completion tokens/s', 'generations/s', 'prompt tokens', 'completion tokens', 'first token ms', 'p99 ms'], llamaRows), '',
    'Each generation evaluates the whole prompt (chat template, system message, product facts; the test vocabulary spells most of it byte by byte) and then decodes the answer.', '');
  say('== llama engine over HTTP');
  const llamaApi = await startApi(url, { AI_ENGINE: 'llama', AI_MODEL_PATH: modelPath, AI_THREADS: '1' });
  const llamaToken = await tokenFor(llamaApi, url);
  const r = await load(llamaApi, llamaToken, { task: 'product-description', productId: 42, temperature: 0 }, o);
  await llamaApi.stop();
  say(`  product-description: ${round(r.rps)} req/s, p99 ${r.p99} ms`);
  lines.push('## llama engine over HTTP (AI_THREADS=1)', '', table(['request', 'req/s', 'p50 ms', 'p99 ms'], [['product-description (en)', round(r.rps), r.p50, r.p99]]), '');
}

const { options } = parseArgs(process.argv.slice(2));
await runAi({
  connections: numberOption(options, 'connections', 10),
  duration: numberOption(options, 'duration', 10),
  warmup: numberOption(options, 'warmup', 2),
  generations: numberOption(options, 'generations', 300),
  only: options.get('only') as Options['only'],
  out: options.get('out'),
});
