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
  /** µs between samples (the first from startTime). */
  timeDeltas: number[];
}

/** A span of the monotonic clock, in µs (`process.hrtime.bigint() / 1000n`: V8's profile clock, the same in every process). */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** Now on the profile's clock, µs. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

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

/**
 * Self time by area and by function of a .cpuprofile written by `node --cpu-prof`, as Markdown. With `windows`,
 * only the samples taken within them count (the load, not the start-up's module loading and schema compiling).
 */
export function summarizeProfile(file: string, top = 15, windows?: ProfileWindow[]): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const hits = new Map<number, number>();
  let at = profile.startTime;
  let sampled = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (windows && !windows.some((w) => at >= w.fromUs && at <= w.toUs)) continue;
    sampled++;
    hits.set(profile.samples[i], (hits.get(profile.samples[i]) ?? 0) + 1);
  }
  const spanMs = windows ? windows.reduce((sum, w) => sum + Math.max(0, Math.min(w.toUs, profile.endTime) - Math.max(w.fromUs, profile.startTime)), 0) / 1000 : (profile.endTime - profile.startTime) / 1000;
  const totalMs = spanMs;
  const msPerSample = sampled ? totalMs / sampled : 0;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = (hits.get(node.id) ?? 0) * msPerSample;
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
