/** `--name value` and `--flag` options after the benchmark names, with defaults. */
export function parseArgs(argv: string[]): { names: string[]; options: Map<string, string> } {
  const names: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      names.push(arg);
      continue;
    }
    const [key, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) options.set(key, inline);
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) options.set(key, argv[++i]);
    else options.set(key, 'true');
  }
  return { names, options };
}

export function numberOption(options: Map<string, string>, name: string, fallback: number): number {
  const raw = options.get(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return n;
}
