import type { Command } from 'commander';
import { hashingKey } from '../auth/credentials.service.ts';
import * as service from '../auth/credentials.service.ts';
import { ALL_SCOPES, parseScopes, type Scope } from '../auth/scopes.ts';
import { fail, printResult } from './output.ts';
import { withStore, type GlobalOptions } from './store.ts';
import { count } from './words.ts';

/** The scopes of `--scopes`; an unknown one fails naming it and every valid one, so the fix is on screen. */
function scopesOption(raw: string): Scope[] {
  if (raw.trim() === 'all') return ALL_SCOPES;
  const { scopes, unknown } = parseScopes(raw);
  if (unknown.length) fail(`unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; valid scopes: ${ALL_SCOPES.join(', ')}, or "all"`);
  return service.validateScopes(scopes);
}

/** Credentials as an aligned table with a header row, and how many there are. */
function credentialTable(list: Awaited<ReturnType<typeof service.listCredentials>>): string {
  if (list.length === 0) return 'No credentials.';
  const rows = [['ID', 'STATUS', 'CLIENT ID', 'NAME', 'SCOPES'], ...list.map((c) => [String(c.id), c.enabled ? 'enabled' : 'disabled', c.clientId, c.name, c.scopes.join(' ')])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
  return [...lines, count(list.length, 'credential')].join('\n');
}

export function registerCredentials(program: Command): void {
  const cmd = program.command('credentials').description('Manage API credentials (client id + secret pairs with scopes)');
  const global = () => program.opts<GlobalOptions>();

  cmd
    .command('create')
    .description('Create a credential; its secret is printed once')
    .requiredOption('--name <name>', 'what the credential is for')
    .requiredOption('--scopes <list>', `comma list of: ${ALL_SCOPES.join(', ')}, or "all"`)
    .option('--json', 'machine-readable output')
    .action(async (o: { name: string; scopes: string; json?: boolean }) => {
      await withStore(global(), async (store) => {
        const scopes = scopesOption(o.scopes);
        const issued = await service.createCredential(store.db, await hashingKey(store.db), o.name, scopes);
        printResult(Boolean(o.json), issued, () =>
          [`Created credential ${issued.id} "${issued.name}"`, `  client id:     ${issued.clientId}`, `  client secret: ${issued.clientSecret}  (shown only now)`, `  scopes:        ${issued.scopes.join(' ')}`].join('\n'));
      });
    });

  cmd
    .command('list')
    .description('List credentials')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      await withStore(global(), async (store) => {
        const list = await service.listCredentials(store.db);
        printResult(Boolean(o.json), list, () => credentialTable(list));
      });
    });

  const byRef = (name: string, description: string, run: (db: Parameters<typeof service.getCredential>[0], id: number) => Promise<unknown>, human: (v: unknown) => string) =>
    cmd
      .command(`${name} <credential>`)
      .description(`${description} (by id or client id)`)
      .option('--json', 'machine-readable output')
      .action(async (ref: string, o: { json?: boolean }) => {
        await withStore(global(), async (store) => {
          const id = await service.resolveCredentialId(store.db, ref);
          const result = await run(store.db, id);
          printResult(Boolean(o.json), result ?? { id, [name]: true }, () => human(result));
        });
      });

  byRef('disable', 'Disable a credential; its tokens stop working at once', (db, id) => service.updateCredential(db, id, { enabled: false }), () => 'Disabled.');
  byRef('enable', 'Enable a credential again', (db, id) => service.updateCredential(db, id, { enabled: true }), () => 'Enabled.');
  byRef('rotate', 'Issue a new secret; the old one and its tokens stop working', async (db, id) => service.rotateSecret(db, await hashingKey(db), id),
    (v) => `New client secret: ${(v as service.IssuedCredential).clientSecret}  (shown only now)`);
  byRef('delete', 'Delete a credential and its tokens', async (db, id) => { await service.deleteCredential(db, id); return undefined; }, () => 'Deleted.');
}
