/** What every command prints: a human line, or JSON with --json; failures are one line on stderr and exit 1. */
export class CliError extends Error {}

export function printResult(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export function fail(message: string): never {
  throw new CliError(message);
}
