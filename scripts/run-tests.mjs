// Runs every test file under test/ with Node's own runner and tsx. Node 20's runner has no glob support,
// so the files are listed here; TEST_FILES=a,b narrows the run.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' || name === 'fixtures' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const only = process.env.TEST_FILES?.split(',').filter(Boolean);
const files = find('test').filter((f) => !only || only.some((o) => f.includes(o))).sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// Tests start the command (bin/store-api.js), which runs the build in dist/app/ when it is fresh: build it first,
// so that the suite tries what `npm install` gives users (and spawned commands start 1.3 s sooner).
const built = spawnSync(process.execPath, ['scripts/build-app.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
// A test that hangs fails after ten minutes instead of holding the run (and CI) until its own limit.
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=600000', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
