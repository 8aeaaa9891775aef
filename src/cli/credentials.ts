import type { Command } from 'commander';
import { hashingKey } from '../auth/credentials.service.ts';
import * as service from '../auth/credentials.service.ts';
import { ALL_SCOPES } from '../auth/scopes.ts';
import { printResult } from './output.ts';
import { withStore, type GlobalOptions } from './store.ts';

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
        const scopes = o.scopes.trim() === 'all' ? ALL_SCOPES : service.validateScopes(o.scopes);
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
        printResult(Boolean(o.json), list, () =>
          list.length === 0 ? 'No credentials.' : list.map((c) => `${c.id}\t${c.enabled ? 'enabled ' : 'disabled'}\t${c.clientId}\t${c.name}\t${c.scopes.join(' ')}`).join('\n'));
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
