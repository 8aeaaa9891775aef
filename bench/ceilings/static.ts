// Ceiling (a): a bare node:http server answering the API's own response bodies from memory. Nothing is cheaper
// over HTTP, so this bounds what any server could do on this machine with this load generator.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { CASES_FILE_ENV, type CasesFile } from '../lib/cases.ts';

const file = JSON.parse(readFileSync(process.env[CASES_FILE_ENV]!, 'utf8')) as CasesFile;
const bodies = new Map(Object.entries(file.bodies ?? {}).map(([path, body]) => [path, Buffer.from(body)]));

createServer((req, res) => {
  const body = bodies.get(req.url ?? '');
  if (!body) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');

// Exit normally on a signal, so that `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
