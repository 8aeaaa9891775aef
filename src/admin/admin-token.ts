import type { FastifyInstance } from 'fastify';
import type { Executor } from '../db/database.ts';
import { getSetting, setSetting } from '../db/settings.ts';
import { constantTimeEqual, keyedHash, randomSecret } from '../auth/secrets.ts';
import { AppError } from '../errors/app-error.ts';

const SETTING = 'admin_token_hash';

/**
 * The admin token's hash: from ADMIN_TOKEN when set, else the one generated on first start. Returns the
 * plain token only when it was generated now, so the caller can print it once.
 */
export async function ensureAdminToken(db: Executor, key: string, configured: string | undefined): Promise<{ hash: string; generated?: string }> {
  if (configured) return { hash: keyedHash(key, configured) };
  const stored = await getSetting(db, SETTING);
  if (stored) return { hash: stored };
  const token = randomSecret('sda_admin_');
  const hash = keyedHash(key, token);
  await setSetting(db, SETTING, hash);
  return { hash, generated: token };
}

export function addAdminGuard(app: FastifyInstance, key: string, hash: () => string | undefined): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const expected = hash();
    if (!match || !expected || !constantTimeEqual(keyedHash(key, match[1]), expected)) {
      throw new AppError('invalid_token', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>.', {
        headers: { 'www-authenticate': 'Bearer realm="store-api-admin", error="invalid_token"' },
      });
    }
  });
}
