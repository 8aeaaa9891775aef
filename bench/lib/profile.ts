import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { table, round } from './report.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** Where a function lives, coarsely: a package, a folder of ours, Node's internals, or V8's own buckets. */
function areaOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  if (path.startsWith('node:')) return 'node internals';
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel.split('/').slice(0, 2).join('/');
}

/** Self time by area and by function of a .cpuprofile written by `node --cpu-prof`, as Markdown. */
export function summarizeProfile(file: string, top = 15): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const msPerSample = totalMs / profile.samples.length;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = (node.hitCount ?? 0) * msPerSample;
    if (!ms) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
    const where = url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  }
  const busy = totalMs - (byArea.get('(idle)') ?? 0);
  const rows = (m: Map<string, number>) =>
    [...m].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, ms]) => [k, round(ms), round((ms / busy) * 100, 1)]);
  return [
    `Busy ${round(busy)} ms of ${round(totalMs)} ms sampled.`,
    '',
    table(['area (self time)', 'ms', '% of busy'], rows(byArea)),
    '',
    table(['function (self time)', 'ms', '% of busy'], rows(byFunction)),
  ].join('\n');
}
