import type { Executor } from '../db/database.ts';
import { ensureSetting } from '../db/settings.ts';
import { keyedHash, randomSecret } from './secrets.ts';

const SETTING = 'admin_token_hash';

/**
 * The admin token's hash: from ADMIN_TOKEN when set, else the one generated on first start. Returns the
 * plain token only when it was generated now, so the caller can print it once.
 */
export async function ensureAdminToken(db: Executor, key: string, configured: string | undefined): Promise<{ hash: string; generated?: string }> {
  if (configured) return { hash: keyedHash(key, configured) };
  // Nodes starting together on one database each make a token; only the one whose insert wins keeps (and prints) it.
  let token = '';
  const { value, created } = await ensureSetting(db, SETTING, () => keyedHash(key, (token = randomSecret('sda_admin_'))));
  return created ? { hash: value, generated: token } : { hash: value };
}
