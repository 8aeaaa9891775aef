import type { BackgroundStarter } from '../background/task.ts';
import { SnapshotRunner } from './runner.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** Runs snapshot jobs beside the server on every node (SNAPSHOTS_PER_NODE at once; 0 runs none but still keeps house). */
export const startSnapshotRunner: BackgroundStarter = async (ctx) => {
  const runner = new SnapshotRunner({
    store: ctx.store, bus: ctx.bus, resources: ctx.resources, hashKey: ctx.hashKey, settings: ctx.config.snapshots, log: ctx.log?.child({ task: 'snapshots' }) ?? silent,
  });
  runner.start();
  return { name: 'snapshot-runner', stop: () => runner.stop() };
};
