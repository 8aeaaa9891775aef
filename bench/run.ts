// `npm run bench [-- NAME…] [--options]`: runs the named benchmarks (default: core). See docs/benchmarks.md.
import { numberOption, parseArgs } from './lib/args.ts';
import { runCore } from './core.ts';

type Bench = (options: Map<string, string>) => Promise<void>;

/** Every benchmark by name; a new one is a file under bench/ and one line here. */
const BENCHMARKS: Record<string, Bench> = {
  core: (options) => {
    // --quick: the same table in under 5 minutes on 2 cores (fewer products, shorter and fewer rounds, half-second
    // warm-ups after the first round, the seeded stores from the seed cache, no info-log server unless asked); any
    // option given still wins. The full run's defaults are unchanged (it seeds afresh and reports the seeding).
    const quick = options.has('quick');
    const flag = (name: string, fallback: boolean) => (options.get(name) ?? String(fallback)) !== 'false';
    return runCore({
      products: numberOption(options, 'products', quick ? 20_000 : 100_000),
      connections: numberOption(options, 'connections', 50),
      duration: numberOption(options, 'duration', quick ? 2 : 4),
      rounds: numberOption(options, 'rounds', quick ? 2 : 5),
      warmup: numberOption(options, 'warmup', quick ? 1 : 2),
      rewarmup: options.has('rewarmup') || quick ? numberOption(options, 'rewarmup', 0.5) : undefined,
      backends: (options.get('backends') ?? 'sqlite,postgres').split(',') as Array<'sqlite' | 'postgres'>,
      infoLogs: flag('info-logs', !quick),
      seedCache: flag('seed-cache', quick),
      compressed: flag('compressed', true),
      czech: flag('czech', false),
      quick,
      profile: options.has('profile'),
      perf: options.has('perf'),
      out: options.get('out'),
      existing: { sqlite: options.get('sqlite-url'), postgres: options.get('postgres-url') },
      only: options.get('only')?.split(','),
    });
  },
};

const { names, options } = parseArgs(process.argv.slice(2));
const chosen = names.length ? names : ['core'];
const unknown = chosen.filter((n) => !BENCHMARKS[n]);
if (unknown.length) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}\n`);
  process.exit(2);
}
for (const name of chosen) await BENCHMARKS[name](options);
