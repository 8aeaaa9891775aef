// Content negotiation is pure logic (no database): the HTTP behaviour is tested in exports.test.ts on both.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/errors/app-error.ts';
import { chooseFormat, parseAccept } from '../../../src/listing/formats/negotiate.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

describe('Accept negotiation (RFC 9110 §12.5.1)', () => {
  it('reads ranges, q-values and ignores other parameters and junk', () => {
    assert.deepEqual(
      parseAccept('Text/CSV;charset=utf-8;q=0.8, */*;q=0.1, nonsense, application/json;q=2').map((r) => [r.type, r.subtype, r.q]),
      [['text', 'csv', 0.8], ['*', '*', 0.1], ['application', 'json', 0]],
    );
  });

  it('picks by q, then specificity, then the order of the header; JSON first among equals', () => {
    const pick = (accept: string | undefined) => chooseFormat(undefined, accept);
    assert.equal(pick(undefined), 'json');
    assert.equal(pick(''), 'json');
    assert.equal(pick('*/*'), 'json');
    assert.equal(pick('application/*'), 'json');
    assert.equal(pick(`${XLSX}, application/*`), 'xlsx');
    assert.equal(pick('text/csv, application/json'), 'csv');
    assert.equal(pick('application/json, text/csv'), 'json');
    assert.equal(pick('text/csv;q=0.5, application/json;q=0.6'), 'json');
    assert.equal(pick('text/*;q=0.9, */*;q=0.1'), 'csv');
    // The most specific range decides a type's q: text/csv;q=0 excludes CSV although */* allows everything.
    assert.equal(pick('text/csv;q=0, text/*, */*;q=0.5'), 'json');
  });

  it('format= wins; an Accept that allows nothing offered is a 406 that says Vary', () => {
    assert.equal(chooseFormat('xlsx', 'text/html'), 'xlsx');
    for (const accept of ['text/html', 'image/png, application/json;q=0', 'application/xml']) {
      assert.throws(() => chooseFormat(undefined, accept), (err: unknown) => err instanceof AppError && err.status === 406 && err.headers.vary === 'Accept', accept);
    }
    assert.throws(() => chooseFormat(undefined, 'text/csv', ['json']), (err: unknown) => err instanceof AppError && err.code === 'not_acceptable');
    assert.equal(chooseFormat(undefined, 'text/csv, */*;q=0.1', ['json']), 'json');
  });
});
