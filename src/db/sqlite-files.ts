import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** The database holds webhook secrets and the installation's hashing key: only its owner may read it. */
export const SQLITE_FILE_MODE = 0o600;
export const SQLITE_FOLDER_MODE = 0o700;

/**
 * Makes the SQLite file ready to open with owner-only permissions. Folders made here are 0700. The file is
 * made here, empty and 0600, before SQLite opens it (SQLite would make it 0644 under the usual umask), and
 * SQLite gives its -wal and -shm files the mode of the database file. A file, -wal or -shm left by an older
 * version with group or world bits is tightened; a folder that already existed is the operator's (it may be
 * /tmp or a shared volume) and is left as it is.
 */
export function prepareSqliteFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: SQLITE_FOLDER_MODE });
  if (!existsSync(path)) closeSync(openSync(path, 'a', SQLITE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let mode: number;
    try {
      mode = statSync(file).mode;
    } catch {
      continue; // no -wal or -shm yet
    }
    try {
      if (mode & 0o077) chmodSync(file, mode & SQLITE_FILE_MODE);
    } catch {
      // Owned by another user (EPERM): tightening is theirs to do; the database opens as it did before.
    }
  }
}
