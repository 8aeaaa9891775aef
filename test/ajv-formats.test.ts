// The date-time format's fast path (src/ajv-formats.ts) answers exactly as ajv-formats' full format does, on the
// API's own form, on every near miss of it, and on arbitrary text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { addFormats, isDateTime } from '../src/ajv-formats.ts';

const full = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;

describe('date-time format', () => {
  it('accepts what the API writes and refuses impossible dates and times', () => {
    for (const s of ['2026-04-20T20:22:47.588Z', '2026-04-20T20:22:47Z', '2024-02-29T00:00:00.000Z', '2026-12-31T23:59:59.123456789Z']) assert.equal(isDateTime(s), true, s);
    for (const s of ['2026-02-29T00:00:00.000Z', '2026-13-01T00:00:00Z', '2026-04-31T00:00:00Z', '2026-04-20T24:00:00Z', '2026-04-20T20:60:00Z', '2026-04-20T20:22:47.Z', '2026-04-20T20:22:47', '2026-04-2OT20:22:47Z', '']) assert.equal(isDateTime(s), false, s);
  });

  it('answers as ajv-formats does for offsets, spaces, lower case and leap seconds (its own check)', () => {
    for (const s of ['2026-04-20T20:22:47+02:00', '2026-04-20 20:22:47Z', '2026-04-20t20:22:47z', '2016-12-31T23:59:60Z', '2016-12-31T22:59:60-01:00', '2026-04-20T20:22:47.5+0200']) assert.equal(isDateTime(s), full(s), s);
  });

  it('agrees with ajv-formats on random date-times and their near misses', () => {
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    const dateTime = fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 33 }), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }), fc.option(fc.stringMatching(/^[0-9]{0,10}$/)))
      .map(([y, mo, d, h, mi, s, f]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${f === null ? '' : `.${f}`}Z`);
    // A character of the form replaced by another (a digit, a separator, a letter), or the text cut short.
    const mutated = fc.tuple(dateTime, fc.nat(), fc.constantFrom('0', '9', '-', ':', '.', 'T', 'Z', 'z', ' ', '+', 'a', '٣')).map(([s, at, c]) => {
      const i = at % s.length;
      return s.slice(0, i) + c + s.slice(i + 1);
    });
    fc.assert(fc.property(fc.oneof(dateTime, mutated, fc.string({ maxLength: 32 })), (s) => isDateTime(s) === full(s)), { numRuns: 50_000 });
  });

  it('is the date-time format of an Ajv that addFormats set up', () => {
    const validate = addFormats(new Ajv()).compile({ type: 'string', format: 'date-time' });
    assert.equal(validate('2026-04-20T20:22:47.588Z'), true);
    assert.equal(validate('2026-02-30T20:22:47.588Z'), false);
    assert.equal(validate('2026-04-20T20:22:47+02:00'), true);
  });
});
