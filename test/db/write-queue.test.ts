import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WriteQueue } from '../../src/db/write-queue.ts';
import { AppError } from '../../src/errors/app-error.ts';

/** A promise with its resolver, to hold a writer in its slot until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('the write queue', () => {
  it('runs at most `slots` writers at once and admits the others in arrival order', async () => {
    const queue = new WriteQueue(2, 60_000);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const runs = gates.map((g, i) => queue.run(async () => {
      started.push(i);
      await g.promise;
      return i;
    }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(queue.load, { running: 2, waiting: 3 });
    gates[1].open();
    await runs[1];
    assert.deepEqual(started, [0, 1, 2]);
    for (const g of gates) g.open();
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4]);
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });

  it('a writer that fails gives its slot back', async () => {
    const queue = new WriteQueue(1, 60_000);
    await assert.rejects(queue.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await queue.run(async () => 'next'), 'next');
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });

  it('a writer that waited too long, or finds the line full, is refused as busy (503 with Retry-After)', async () => {
    const queue = new WriteQueue(1, 50, 1);
    const held = gate();
    const first = queue.run(() => held.promise);
    const waiting = queue.run(async () => 'never');
    const refused = await queue.run(async () => 'never').then(() => undefined, (e: unknown) => e);
    assert.ok(refused instanceof AppError && refused.code === 'service_unavailable' && refused.headers['retry-after']);
    const late = await waiting.then(() => undefined, (e: unknown) => e);
    assert.ok(late instanceof AppError && late.code === 'service_unavailable');
    assert.deepEqual(queue.load, { running: 1, waiting: 0 });
    held.open();
    await first;
    assert.deepEqual(queue.load, { running: 0, waiting: 0 });
  });
});
