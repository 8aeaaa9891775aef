import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { onAbort } from './cleanup.ts';

/** Peak resident memory of a running process, from the kernel's high-water mark (Linux), polled. */
export function watchPeakRss(pid: number): { peakMb(): number; stop(): void } {
  let peakKb = 0;
  const read = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // The process has exited: the last reading stands.
    }
  };
  read();
  const timer = setInterval(read, 100);
  return { peakMb: () => (read(), Math.round(peakKb / 1024)), stop: () => clearInterval(timer) };
}

export interface Measured {
  stdout: string;
  seconds: number;
  peakRssMb: number;
}

/** Runs a command to completion, timing it and tracking its peak memory. */
export function runMeasured(command: string, args: string[], env: Record<string, string> = {}): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.once('exit', onAbort(() => child.kill('SIGKILL')));
    const rss = watchPeakRss(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      rss.stop();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) return reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${stderr.slice(-2000)}`));
      resolve({ stdout, seconds, peakRssMb: rss.peakMb() });
    });
  });
}

export interface Server {
  url: string;
  child: ChildProcess;
  peakRssMb(): number;
  stop(): Promise<void>;
}

async function waitUntilUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  // Generous: starting through tsx on a loaded 2-core machine has taken over a minute.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before listening:\n${log()}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server at ${url} did not come up in 180 s:\n${log()}`);
}

/** Starts a server process and waits until `readyUrl` answers (any status). `stop` sends SIGTERM to it alone. */
export async function startServer(name: string, command: string, args: string[], env: Record<string, string>, readyUrl: string): Promise<Server> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const forget = onAbort(() => child.kill('SIGKILL'));
  child.once('exit', forget);
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const rss = watchPeakRss(child.pid!);
  await waitUntilUp(readyUrl, child, () => output);
  return {
    url: new URL(readyUrl).origin,
    child,
    peakRssMb: () => rss.peakMb(),
    stop: () =>
      new Promise<void>((resolve) => {
        rss.stop();
        if (child.exitCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }).then(() => {
        if (child.exitCode !== 0 && child.signalCode === null && child.exitCode !== null) process.stderr.write(`${name} exited with ${child.exitCode}\n${output.slice(-2000)}\n`);
      }),
  };
}
