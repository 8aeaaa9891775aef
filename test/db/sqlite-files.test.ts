import assert from 'node:assert/strict';
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ensureSetting } from '../../src/db/settings.ts';

const modeOf = (path: string) => statSync(path).mode & 0o777;

// SQLite files only: PostgreSQL keeps its files itself.
describe('the SQLite database files', () => {
  const root = mkdtempSync(join(tmpdir(), 'store-api-perms-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('are made owner-only: folders 0700, the file and its -wal and -shm 0600', async () => {
    const file = join(root, 'new', 'nested', 'store.db');
    const store = openStore(`sqlite:${file}`);
    try {
      await migrateToLatest(store.db);
      await ensureSetting(store.db, 'probe', () => 'secret');
      await sql`select 1`.execute(store.db);
      assert.equal(modeOf(join(root, 'new')), 0o700);
      assert.equal(modeOf(join(root, 'new', 'nested')), 0o700);
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(`${file}-wal`), 0o600, 'SQLite gives -wal the mode of the database file');
      assert.equal(modeOf(`${file}-shm`), 0o600);
    } finally {
      await store.close();
    }
  });

  it('tighten a world-readable file left by an older version, and leave a folder that already existed alone', async () => {
    const folder = join(root, 'old');
    const file = join(folder, 'store.db');
    openStore(`sqlite:${file}`).close();
    chmodSync(folder, 0o755);
    chmodSync(file, 0o644);
    closeSync(openSync(`${file}-wal`, 'a', 0o666));
    chmodSync(`${file}-wal`, 0o664);
    const store = openStore(`sqlite:${file}`);
    try {
      await migrateToLatest(store.db);
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(`${file}-wal`), 0o600);
      assert.equal(modeOf(folder), 0o755, "the operator's folder (it may be /tmp) is not changed");
    } finally {
      await store.close();
    }
  });
});
