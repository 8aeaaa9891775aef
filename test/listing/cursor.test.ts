import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCursor, encodeCursor, knownCursorCount, MAX_KNOWN_CURSORS } from '../../src/listing/cursor.ts';
import { AppError } from '../../src/errors/app-error.ts';

const KEY = 'the installation key of these tests';
const refused = (e: unknown) => e instanceof AppError && e.code === 'invalid_parameter';

/** The cursors this process signed or checked are remembered (cursor.ts): what a remembered one may and may not do. */
describe('cursors this process already knows', () => {
  it('reads back the state it was issued with, frozen, shared by every request that sends it', () => {
    const raw = encodeCursor({ sort: '-updatedAt', filters: { status: 'active' }, after: ['2026-11-28T10:00:00.000Z', 7], shape: { fields: ['name'], include: ['brand'] } }, KEY);
    const state = decodeCursor(raw, KEY);
    assert.deepEqual({ ...state, filters: { ...state.filters }, after: [...state.after], shape: { ...state.shape } },
      { sort: '-updatedAt', filters: { status: 'active' }, after: ['2026-11-28T10:00:00.000Z', 7], shape: { fields: ['name'], include: ['brand'] } });
    assert.equal(decodeCursor(raw, KEY), state);
    assert.ok(Object.isFrozen(state) && Object.isFrozen(state.filters) && Object.isFrozen(state.after) && Object.isFrozen(state.shape));
    assert.throws(() => { state.filters.status = 'archived'; }, TypeError);
  });

  it('is refused under another installation key, though this process signed it', () => {
    const raw = encodeCursor({ sort: 'id', filters: {}, after: [41] }, KEY);
    assert.equal(decodeCursor(raw, KEY).after[0], 41);
    assert.throws(() => decodeCursor(raw, 'another installation'), refused);
    // A cursor checked under the other key is not thereby ours either.
    const theirs = encodeCursor({ sort: 'id', filters: {}, after: [42] }, 'another installation');
    assert.equal(decodeCursor(theirs, 'another installation').after[0], 42);
    assert.throws(() => decodeCursor(theirs, KEY), refused);
  });

  it('is refused when its state would be refused coming back (a NUL in a filter), though signed here', () => {
    const raw = encodeCursor({ sort: 'id', filters: { status: 'act\u0000ive' }, after: [3] }, KEY);
    assert.throws(() => decodeCursor(raw, KEY), refused);
  });

  it('keeps at most MAX_KNOWN_CURSORS, and still reads the ones it let go', () => {
    const first = encodeCursor({ sort: 'id', filters: {}, after: [1_000_000] }, KEY);
    for (let i = 1; i <= MAX_KNOWN_CURSORS + 10; i++) encodeCursor({ sort: 'id', filters: {}, after: [1_000_000 + i] }, KEY);
    assert.equal(knownCursorCount(), MAX_KNOWN_CURSORS);
    assert.equal(decodeCursor(first, KEY).after[0], 1_000_000, 'checked again, by its tag');
  });
});
