// The build the command runs from: src/cli/main.ts and everything it imports, bundled by esbuild into plain
// JavaScript (packages stay imports of node_modules; lazily imported modules stay chunks of their own, so what a
// command does not need is still not loaded). Plain JavaScript starts about 1.3 s sooner than the sources through
// tsx and leaves out tsx's loader thread (about 28 MB of RSS for an idle server, measured with `serve` on SQLite).
// Written in JavaScript so that it runs without a TypeScript loader.
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** Each build is a folder of its own under here; the file `current` names the newest. */
export const BUILDS_DIR = join(ROOT, 'dist', 'app');
/** Written last into a build's folder: its time is when the build began. */
const DONE = '.built';
/**
 * Builds kept: the newest three, and any made in the last day, so that a server started from an older build
 * still finds the chunks it loads lazily (the MCP server's, on the first POST /mcp).
 */
const KEEP = 3;
const KEEP_MS = 24 * 3_600_000;

/** The newest modification time of a file under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    if (time > latest) latest = time;
  }
  return latest;
}

/**
 * The entry module of the newest build when it is at least as new as every file under `srcDir` and package.json
 * (whose dependencies it imports); otherwise undefined. An edited or checked-out source makes the build stale,
 * and the command then runs the sources, so a stale build is never run. Walking src/ takes a few milliseconds.
 */
export function freshBuild(srcDir = join(ROOT, 'src'), buildsDir = BUILDS_DIR, packageJson = join(ROOT, 'package.json')) {
  let name;
  try {
    name = readFileSync(join(buildsDir, 'current'), 'utf8').trim();
  } catch {
    return undefined;
  }
  const done = join(buildsDir, name, DONE);
  if (!existsSync(done)) return undefined;
  const built = statSync(done).mtimeMs;
  return newest(srcDir) <= built && statSync(packageJson).mtimeMs <= built ? join(buildsDir, name, 'main.js') : undefined;
}

/**
 * Builds into a new folder, then names it in `current` (written aside and renamed, so a command started
 * meanwhile reads the old name or the new, never half of either). The marker's time is when the build began, so
 * a source saved during the build leaves the result stale rather than fresh. Older builds go (see KEEP).
 */
export async function buildApp(root = ROOT, buildsDir = BUILDS_DIR) {
  const { build } = await import('esbuild');
  const startedAt = new Date();
  const name = `${startedAt.toISOString().replace(/[-:.]/g, '')}-${process.pid}`;
  const dir = join(buildsDir, name);
  await build({
    entryPoints: [join(root, 'src', 'cli', 'main.ts')],
    outdir: dir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  writeFileSync(join(dir, DONE), `${startedAt.toISOString()}\n`);
  utimesSync(join(dir, DONE), startedAt, startedAt);
  writeFileSync(join(buildsDir, `current.${process.pid}`), `${name}\n`);
  renameSync(join(buildsDir, `current.${process.pid}`), join(buildsDir, 'current'));
  const builds = readdirSync(buildsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  for (const old of builds.slice(0, -KEEP)) {
    const path = join(buildsDir, old);
    if (Date.now() - statSync(path).mtimeMs > KEEP_MS) rmSync(path, { recursive: true, force: true });
  }
  return dir;
}
