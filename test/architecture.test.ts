// The shape of src/: no import circles, and imports go down the layers only. Every `import … from`,
// `export … from`, side-effect `import '…'` and dynamic `import('…')` of a src/ file counts, `import type`
// included: a type import still couples the two files (a change of the type breaks the importer, and the
// importer cannot be read or moved without the other), it is only erased at run time. TypeScript's own
// pre-processor finds them (no regular expression over source text), so comments and strings do not.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/**
 * The layers, bottom → top. A file may import files of its own layer or of a lower one. Paths are relative to
 * src/: a file (`app.ts`), a folder (`db/`) or a name ending (`*.routes.ts`). The most specific match names a
 * file's layer: a file named on its own, then a name ending, then the longest folder.
 */
const LAYERS: Array<{ layer: string; paths: string[] }> = [
  // Modules that import nothing of src/ (money's schemas and arithmetic), so that every layer may use them.
  // The typed client too (client/): it ships on its own in the package and talks to the API over HTTP only.
  { layer: 'leaves', paths: ['money.ts', 'digest.ts', 'package-root.ts', 'ajv-formats.ts', 'buffer-recycler.ts', 'client/'] },
  { layer: 'config', paths: ['config.ts'] },
  { layer: 'errors', paths: ['errors/'] },
  { layer: 'db', paths: ['db/'] },
  // Problems, error responses, links, guards and limits of the HTTP layer; not its route files (below).
  { layer: 'http primitives', paths: ['http/'] },
  // The log, the changes feed's reads, the bus and its signal, and the write transaction that records events and wakes the bus.
  { layer: 'event log core', paths: ['events/log.ts', 'events/feed.ts', 'events/bus.ts', 'events/signal.ts', 'events/transaction.ts'] },
  // defineResource and its derivations, the listing engine and its formats.
  { layer: 'resource kernel', paths: ['resources/', 'listing/'] },
  { layer: 'modules', paths: ['modules/'] },
  {
    layer: 'services',
    paths: [
      'import/', 'sync/', 'snapshots/', 'mcp/', 'events/webhooks/', 'auth/', 'ratelimit/', 'ai/', 'seed/',
      // Fastify's request and route-config types as the bearer guard fills them (a grant, a scope).
      'http/types.ts',
    ],
  },
  // What the running app shares, built from the services; what takes it (routes, background tasks) is above.
  { layer: 'context', paths: ['context.ts'] },
  {
    layer: 'app',
    paths: [
      // Route files (each a plugin taking the context), the hooks and plugins that take it, and the app they make.
      '*.routes.ts', '*.route.ts', 'listing/routes.ts', 'listing/serve.ts', 'auth/bearer.ts', 'http/openapi.ts', 'admin/', 'console/', 'app.ts',
      // Background tasks (each a starter taking the context) and the one list of them.
      'background/', 'events/pruner.ts', 'events/webhooks/starter.ts', 'sync/starter.ts', 'snapshots/starter.ts', 'auth/token-pruner.ts',
      'server.ts', 'cli/',
    ],
  },
];

/**
 * Knots allowed for a while, each an import `from → to` that is upward or closes a circle, with the way out.
 * Empty: the tree has none. A knot not in it fails the test, and so does an entry that no longer occurs.
 */
const KNOWN: Array<{ from: string; to: string; why: string }> = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((f) => relative(SRC, f).split('\\').join('/')).sort();
const known = new Set(files);

/** The src/ files a file imports (packages and node: modules are not edges). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(SRC, resolve(SRC, dirname(file), name)).split('\\').join('/'))
    .filter((target) => known.has(target));
}

const graph = new Map(files.map((f) => [f, [...new Set(importsOf(f))]]));
const isKnown = (from: string, to: string) => KNOWN.some((k) => k.from === from && k.to === to);
/** The graph without the known exceptions: a circle that needs none of them is a new knot. */
const checked = new Map([...graph].map(([f, targets]) => [f, targets.filter((t) => !isKnown(f, t))]));

/** How specifically `path` names `file` (0: not at all): a file itself, then a name ending, then a folder by its length. */
function specificity(path: string, file: string): number {
  if (path === file) return 3_000;
  if (path.startsWith('*')) return file.endsWith(path.slice(1)) ? 2_000 : 0;
  return path.endsWith('/') && file.startsWith(path) ? path.length : 0;
}

/** The index in LAYERS of a file's layer (-1: none). */
function layerOf(file: string): number {
  let best = { layer: -1, score: 0 };
  LAYERS.forEach((l, layer) => {
    for (const p of l.paths) {
      const score = specificity(p, file);
      if (score > best.score) best = { layer, score };
    }
  });
  return best.layer;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of checked.get(v)!) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || checked.get(v)!.includes(v)) found.push(component);
    }
  };
  for (const f of files) if (!indexOf.has(f)) visit(f);
  return found;
}

/** One circle through a component, as `a → b → … → a`, so the message names the imports to cut. */
function circleThrough(component: string[]): string {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const path = [start];
  const seen = new Set([start]);
  // Depth-first within the component until an edge leads back to the start.
  const walk = (v: string): boolean => {
    for (const w of checked.get(v)!.filter((x) => members.has(x))) {
      if (w === start) return true;
      if (seen.has(w)) continue;
      seen.add(w);
      path.push(w);
      if (walk(w)) return true;
      path.pop();
    }
    return false;
  };
  walk(start);
  return [...path, start].join(' → ');
}

describe('architecture of src/', () => {
  it('every file of src/ has a layer', () => {
    assert.deepEqual(files.filter((f) => layerOf(f) < 0), [], 'add these files to LAYERS in test/architecture.test.ts');
  });

  it('no import circles', () => {
    const circles = cycles().map(circleThrough);
    assert.deepEqual(circles, [], `import circles:\n${circles.join('\n')}`);
  });

  it('imports go down the layers only', () => {
    const upward: string[] = [];
    for (const [from, targets] of checked) {
      for (const to of targets) {
        if (layerOf(from) >= 0 && layerOf(to) > layerOf(from)) upward.push(`${from} (${LAYERS[layerOf(from)].layer}) → ${to} (${LAYERS[layerOf(to)].layer})`);
      }
    }
    assert.deepEqual(upward, [], `imports from a lower layer to a higher one:\n${upward.join('\n')}`);
  });

  it('every known exception is still a knot (remove those that are not)', () => {
    // Still a knot: the import is there, and it goes up a layer or closes a circle (its target leads back).
    const reaches = (from: string, to: string): boolean => {
      const seen = new Set<string>();
      const next = [from];
      while (next.length > 0) {
        const v = next.pop()!;
        if (v === to) return true;
        if (seen.has(v)) continue;
        seen.add(v);
        next.push(...graph.get(v)!);
      }
      return false;
    };
    const knot = (k: { from: string; to: string }) => graph.get(k.from)?.includes(k.to) && (layerOf(k.to) > layerOf(k.from) || reaches(k.to, k.from));
    assert.deepEqual(KNOWN.filter((k) => !knot(k)).map((k) => `${k.from} → ${k.to}`), []);
  });
});
