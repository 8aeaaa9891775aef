// Ceiling (b): a bare node:http server running, for each case, the very SQL the API runs (compiled by the API's own
// listing engine) through the same driver, and answering JSON.stringify of the same envelope: no framework, no
// auth, no validation, no schema serializer. The API's overhead is measured against this.
import { createServer, type ServerResponse } from 'node:http';
import { queryAnswers } from './query-answers.ts';

const answer = await queryAnswers();

function send(res: ServerResponse, text: string | undefined): void {
  if (text === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

createServer((req, res) => {
  const answering = answer(req.url ?? '');
  if (!answering) {
    res.writeHead(404).end();
    return;
  }
  answering.then((text) => send(res, text), (error: Error) => res.writeHead(500).end(error.message));
}).listen(Number(process.env.PORT), '127.0.0.1');

// Exit normally on a signal, so that `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
