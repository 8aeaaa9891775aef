// Every relative link of the README and docs/ must lead to a file of the repository (so it works in a clone)
// and every #anchor to a heading of its target. Absolute URLs are not fetched: tests send nothing off the machine.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Link {
  line: number;
  target: string;
}

/**
 * The lines of a Markdown text outside fenced code blocks (blank inside them, so line numbers hold), with inline
 * code dropped (where `[a](b)` is text, not a link) or, with `keepCode`, only its backticks dropped.
 */
function prose(markdown: string, keepCode = false): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`([^`]*)`/g, keepCode ? '$1' : '');
  });
}

/** The inline links and images `[text](target)` / `![alt](target "title")` of a Markdown text. */
function linksOf(markdown: string): Link[] {
  return prose(markdown).flatMap((text, i) =>
    [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({ line: i + 1, target: m[1] })),
  );
}

/** GitHub's anchor of a heading: link markup and punctuation dropped, lower case, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings; a repeated heading gets -1, -2… as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown, true)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** What is wrong with one link of `file`, or undefined when it resolves inside the repository. */
function problemOf(file: string, target: string, root = ROOT): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
  const inside = relative(root, path);
  if (inside.startsWith('..') || inside.startsWith(sep)) return `leads outside the repository (${inside}), which a clone lacks`;
  if (!existsSync(path)) return `no such file ${inside}`;
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) {
    return `no heading #${anchor} in ${inside}`;
  }
  return undefined;
}

const documents = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('documentation links', () => {
  it('finds links, and tells a broken one from a good one', () => {
    const readme = join(ROOT, 'README.md');
    const links = linksOf(readFileSync(readme, 'utf8'));
    assert.ok(links.some((l) => l.target === 'docs/README.md'), 'the README links the docs index');
    assert.deepEqual(linksOf('a [x](y.md) `[not](a-link)`\n```\n[nor](this)\n```\n[z](<w.md#h> "t")').map((l) => [l.line, l.target]), [[1, 'y.md'], [5, 'w.md#h']]);
    assert.equal(problemOf(readme, 'docs/README.md'), undefined);
    assert.match(problemOf(readme, 'docs/no-such-file.md') ?? '', /no such file/);
    assert.match(problemOf(readme, '../shared/API.md') ?? '', /outside the repository/);
    assert.match(problemOf(readme, '#no-such-heading') ?? '', /no heading/);
    assert.equal(slug('Results (2026-11-21, [full report](x.md))'), 'results-2026-11-21-full-report');
    assert.equal(slug('Engines (AI_ENGINE)'), 'engines-ai_engine');
  });

  for (const document of documents) {
    it(`every relative link of ${document} resolves in the repository`, () => {
      const file = join(ROOT, document);
      const broken = linksOf(readFileSync(file, 'utf8')).flatMap(({ line, target }) => {
        const problem = problemOf(file, target);
        return problem ? [`${document}:${line}: (${target}) ${problem}`] : [];
      });
      assert.deepEqual(broken, []);
    });
  }
});
