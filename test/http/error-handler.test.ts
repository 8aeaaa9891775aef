import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors/app-error.ts';
import { classify } from '../../src/http/error-handler.ts';

/** The classifier on its own: the errors the database drivers raise, and what each must become. */
describe('error classification', () => {
  const dbError = (code: string, message = 'secret detail: select * from credentials') => Object.assign(new Error(message), { code });

  it('turns constraint violations that slip past our own checks into 409 conflicts', () => {
    for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23503', 'SQLITE_CONSTRAINT_FOREIGNKEY']) {
      const c = classify(dbError(code));
      assert.equal(c.code, 'conflict', code);
      assert.doesNotMatch(c.detail, /secret|select/);
    }
  });

  it('turns a locked or unreachable database into a 503 with Retry-After', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_LOCKED', 'ECONNREFUSED', '57P01', '53300']) {
      const c = classify(dbError(code));
      assert.equal(c.code, 'service_unavailable', code);
      assert.equal(c.headers?.['retry-after'], '1');
      assert.doesNotMatch(c.detail, /secret|select/);
    }
  });

  it('hides the cause of anything unexpected', () => {
    const c = classify(new TypeError('Cannot read properties of undefined (reading "x") at /work/main/src/a.ts:1'));
    assert.equal(c.code, 'internal_error');
    assert.doesNotMatch(c.detail, /undefined|\.ts/);
  });

  it('passes AppErrors through with their fields and headers', () => {
    const c = classify(new AppError('rate_limited', 'slow down', { headers: { 'retry-after': '3' }, errors: [{ name: 'x', reason: 'y' }] }));
    assert.deepEqual(c, { code: 'rate_limited', detail: 'slow down', errors: [{ name: 'x', reason: 'y' }], headers: { 'retry-after': '3' } });
  });

  it('names query parameters from validation errors without consulting Object.prototype', () => {
    const validation = [
      { keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'constructor' } },
      { keyword: 'type', instancePath: '/status', params: { type: 'string' } },
      { keyword: 'maximum', instancePath: '/limit', params: { limit: 1000 } },
    ];
    const c = classify(Object.assign(new Error('bad'), { validation, validationContext: 'querystring' }));
    assert.equal(c.code, 'invalid_parameter');
    assert.deepEqual(c.errors, [
      { name: 'constructor', reason: 'is not a known parameter or field' },
      { name: 'status', reason: 'must be given once (several values go in one comma list)' },
      { name: 'limit', reason: 'must be an integer between 1 and 1000' },
    ]);
  });
});
