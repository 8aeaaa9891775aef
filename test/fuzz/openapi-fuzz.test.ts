// Property-based fuzzing of every operation in the live OpenAPI document, on both databases. For each
// operation: the boundary sweep (sweep.ts: each parameter and body field set to each known-bad value), then
// FUZZ_RUNS random requests (30 by default) drawn from its parameters and body schema, with boundary,
// hostile and wrong-typed values, wrong media types and credentials; each answer must keep the contract
// (see oracle.ts). A failure names FUZZ_SEED, which replays the whole run.
import { createHash, randomInt } from 'node:crypto';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { labelOf, operationsOf, type OpenApiDocument, type OperationRef } from './document.ts';
import { prepareFixtures } from './fixtures.ts';
import { Oracle } from './oracle.ts';
import { requestsFor, type FuzzRequest } from './requests.ts';
import { sweepRequests } from './sweep.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
/** FUZZ_SURVEY=1: go on after a failure and list the failing requests of the operation (for triage), instead of stopping and shrinking. */
const SURVEY = process.env.FUZZ_SURVEY === '1';
const BASE_SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
if (!Number.isInteger(RUNS) || RUNS < 1 || !Number.isInteger(BASE_SEED)) throw new Error('FUZZ_RUNS and FUZZ_SEED must be integers');

/** Each operation's own seed, from the run's: one FUZZ_SEED replays every operation as it ran. */
const seedOf = (label: string): number => createHash('sha256').update(`${BASE_SEED} ${label}`).digest().readInt32BE(0);

/**
 * The document the requests are drawn from: the live one, with `wait` (the changes feed's long-poll, up to
 * 30 s) held to a tenth of a second. Long-polls have tests of their own; here they would only make the run
 * long. Its boundary values (max + 1, negative, huge) are still sent.
 */
function forGeneration(doc: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(doc);
  for (const item of Object.values(copy.paths)) {
    for (const op of Object.values(item)) for (const p of op.parameters ?? []) if (p.name === 'wait' && p.in === 'query') p.schema.maximum = 0.1;
  }
  return copy;
}

const short = (text: string, max = 600): string => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);

/** How a request prints in fast-check's counterexample: what is needed to send it again, bodies cut short. */
const printable = (req: FuzzRequest): FuzzRequest & fc.WithToStringMethod =>
  Object.assign(req, {
    [fc.toStringMethod]: () => JSON.stringify({ method: req.method, url: short(req.url, 300), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, short(v, 120)])), payload: req.payload === undefined ? undefined : short(req.payload, 400) }),
  });

for (const dialect of await dialects()) {
  const t = await createTestApp(dialect, {
    seed: { products: 50, orders: 20 },
    // Text generation is limited to 1 request/s per credential by default; the fuzzer wants answers, not 429s.
    env: { AI_RATE_LIMIT_RPS: '100000', AI_RATE_LIMIT_BURST: '100000' },
  });
  const res = await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /api/v2/openapi.json answered ${res.statusCode}`);
  const doc = res.json() as OpenApiDocument;
  const ops = operationsOf(doc);
  const generation = forGeneration(doc);
  const generationOps = operationsOf(generation);
  const oracle = new Oracle(doc);
  const fixtures = await prepareFixtures(t, doc, ops);

  describe(`fuzz: every operation of the OpenAPI document (${dialect}, FUZZ_SEED=${BASE_SEED}, ${RUNS} runs each)`, () => {
    after(() => t.close());

    it('covers every operation, writers after readers', () => {
      if (ops.length < 40) throw new Error(`only ${ops.length} operations in the document`);
      const firstAdminWrite = ops.findIndex((o) => o.auth.kind === 'admin' && o.method !== 'GET');
      if (ops.slice(firstAdminWrite).some((o) => o.method === 'GET' && o.auth.kind === 'admin')) throw new Error('an admin read runs after an admin write');
    });

    ops.forEach((o: OperationRef, i) => {
      const label = labelOf(o);
      it(label, async (tc) => {
        const seed = seedOf(label);
        const statuses = new Map<number, number>();
        const hints = fixtures.hintsFor(o);
        const requests = requestsFor(generation, generationOps[i], fixtures.creds, hints).map(printable);
        const sweep = sweepRequests(generation, generationOps[i], fixtures.creds, hints, seed).map((r) => [printable(r)] as [FuzzRequest]);
        const found = new Map<string, string>();
        try {
          await fc.assert(
            fc.asyncProperty(requests, async (req) => {
              const answer = await t.app.inject({ method: req.method, url: req.url, headers: req.headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
              statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
              const wrong = oracle.check(o, answer, req.url);
              if (!wrong) return;
              if (!SURVEY) throw new Error(`${wrong}: ${answer.statusCode} ${short(answer.body)}`);
              const shown = printable(req)[fc.toStringMethod]();
              if (found.size < 20 && !found.has(shown)) found.set(shown, `${wrong}\n    ${shown}\n    → ${answer.statusCode} ${short(answer.body, 300)}`);
            }),
            { numRuns: sweep.length + RUNS, seed, examples: sweep, includeErrorInReport: true },
          );
          if (found.size) throw new Error(`${found.size} failing requests (at most 20 shown):\n${[...found.values()].join('\n')}`);
        } catch (err) {
          throw new Error(`${label} on ${dialect}: FUZZ_SEED=${BASE_SEED} replays this run (operation seed ${seed}).\n${(err as Error).message}`);
        }
        tc.diagnostic(`statuses ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`);
      });
    });
  });
}
