// Ceiling (f): ceiling (b)'s answers (the same SQL, driver and JSON.stringify) served by Fastify 5 with nothing
// else: one catch-all route, no hooks, no plugins, no schemas, no logger. Against (b) it measures what the
// framework alone costs per request, the floor under the API's own checks (auth, scopes, rate limit, validation,
// ETag, compression negotiation), which the API adds on Fastify.
import Fastify from 'fastify';
import { queryAnswers } from './query-answers.ts';

const answer = await queryAnswers();
const app = Fastify({ logger: false });

app.get('/*', async (request, reply) => {
  const text = await answer(request.url);
  if (text === undefined) return reply.code(404).send();
  return reply.type('application/json; charset=utf-8').send(text);
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });

// Exit normally on a signal, so that `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
