// HEAP_GROWTH_PERCENT: read and checked with the other settings, and what `serve` hands V8 at start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config.ts';

const BIN = fileURLToPath(new URL('../../bin/store-api.js', import.meta.url));

describe('HEAP_GROWTH_PERCENT', () => {
  it('is 50 unless set; 0 leaves it to V8; a negative or non-number value is refused with its name', () => {
    assert.equal(loadConfig({}).heapGrowthPercent, 50);
    assert.equal(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent, 0);
    assert.equal(loadConfig({ HEAP_GROWTH_PERCENT: '100' }).heapGrowthPercent, 100);
    for (const bad of ['-1', 'half']) assert.throws(() => loadConfig({ HEAP_GROWTH_PERCENT: bad }), (e: unknown) => e instanceof ConfigError && /HEAP_GROWTH_PERCENT/.test(e.message));
  });

  it('serve refuses a bad value at start, with a one-line reason, before it listens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-api-heap-'));
    try {
      const child = spawn(process.execPath, [BIN, '--database', `sqlite:${join(dir, 's.db')}`, 'serve', '--host', '127.0.0.1', '--port', '0'], { env: { ...process.env, HEAP_GROWTH_PERCENT: 'half' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      assert.notEqual(code, 0);
      assert.match(out, /HEAP_GROWTH_PERCENT must be a number >= 0, got "half"/);
      assert.doesNotMatch(out, /listening on/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
