import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { loggerOptions, redactUrl } from '../../src/http/log-redaction.ts';

/** The redaction on its own: what a logged URL or field keeps and what it loses. */
describe('log redaction', () => {
  it('replaces the values of secret query parameters, keeping everything else as it was', () => {
    const cases: Array<[string, string]> = [
      ['/oauth/token?client_secret=abc&grant_type=client_credentials', '/oauth/token?client_secret=[redacted]&grant_type=client_credentials'],
      ['/api/v2/products?ACCESS_TOKEN=abc', '/api/v2/products?ACCESS_TOKEN=[redacted]'],
      ['/x?client%5Fsecret=abc&a=%20b', '/x?client%5Fsecret=[redacted]&a=%20b'],
      ['/x?sig=1&signature=2&token=3&refresh_token=4&password=5&api_key=6', '/x?sig=[redacted]&signature=[redacted]&token=[redacted]&refresh_token=[redacted]&password=[redacted]&api_key=[redacted]'],
      ['/x?token', '/x?token=[redacted]'],
      ['/x?tokens=1&my_token=2', '/x?tokens=1&my_token=2'],
      ['/x?a=1&&b=%ZZ', '/x?a=1&&b=%ZZ'],
      ['https://hooks.example/in?token=abc#frag', 'https://hooks.example/in?token=[redacted]#frag'],
      ['https://user:hunter2@store.example/path', 'https://user:[redacted]@store.example/path'],
      ['/plain/path', '/plain/path'],
    ];
    for (const [url, expected] of cases) assert.equal(redactUrl(url), expected, url);
  });

  it('the logger redacts a logged url, request and secret fields', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString()); done(); } });
    const options = loggerOptions('info', sink);
    const log = pino(options, sink);
    log.info({ url: '/oauth/token?client_secret=S1' }, 'request');
    log.info({ req: { method: 'GET', url: '/x?access_token=S2', headers: { authorization: 'Bearer S3' } } }, 'incoming');
    log.info({ body: { client_secret: 'S4', client_id: 'visible' }, headers: { authorization: 'Basic S5' } }, 'fields');
    const text = lines.join('');
    assert.doesNotMatch(text, /S[1-5]/);
    assert.match(text, /visible/);
    assert.match(text, /client_secret=\[redacted\]/);
  });
});
