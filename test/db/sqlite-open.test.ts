import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqliteConnection } from '../../src/db/database.ts';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * Another process that holds the write lock of a new file, still in its first (rollback) journal mode, the way a
 * command that got there first does while it switches the file to WAL or creates its tables. It says `held`,
 * keeps the lock for `ms`, then lets it go and exits.
 */
function holdNewFile(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const script = `
    const SQLite = require(${JSON.stringify(BETTER_SQLITE3)});
    const db = new SQLite(${JSON.stringify(path)});
    db.exec('begin immediate');
    db.exec('create table made_first (x)');
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('commit'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`holder exited ${code}`)))));
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').once('data', () => resolve({ released }));
    child.once('error', reject);
  });
}

describe('opening a new SQLite file that another process is writing (sqlite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-api-open-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for the other writer and switches the file to WAL, instead of failing "database is locked" at once', async () => {
    const path = join(dir, 'new.db');
    closeSync(openSync(path, 'a', 0o600)); // as prepareSqliteFile leaves it: empty
    const holder = await holdNewFile(path, 400);
    // SQLite fails this switch at once (no busy_timeout) while the other process holds the write lock: a reader
    // upgrading to writer beside another writer could deadlock. Without the retry this throws SQLITE_BUSY here.
    const conn = openSqliteConnection(path);
    try {
      assert.equal(conn.pragma('journal_mode', { simple: true }), 'wal');
      // The other process's work is there: this one switched once the other had committed.
      assert.deepEqual(conn.prepare("select name from sqlite_master where type = 'table'").pluck().all(), ['made_first']);
    } finally {
      conn.close();
      await holder.released;
    }
  });

  it('opens a file that is already WAL at once while another process holds its write lock', async () => {
    const path = join(dir, 'wal.db');
    openSqliteConnection(path).close();
    const holder = await holdNewFile(path, 3000);
    const conn = openSqliteConnection(path);
    try {
      assert.equal(conn.pragma('journal_mode', { simple: true }), 'wal');
      // Opened while the other still holds the lock: taking it now fails (no wait: busy_timeout 0).
      conn.pragma('busy_timeout = 0');
      assert.throws(() => conn.exec('begin immediate'), (e: { code?: string }) => e.code === 'SQLITE_BUSY');
    } finally {
      conn.close();
      await holder.released;
    }
  });
});
