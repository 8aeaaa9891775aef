import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { scopeCatalogue } from '../auth/scopes.ts';
import type { AppContext } from '../context.ts';
import { PROBLEMS, problemSlug } from '../errors/codes.ts';

const problemList = Object.entries(PROBLEMS)
  .map(([code, p]) => `| \`${code}\` | ${p.status} | ${p.title}: ${p.description} |`)
  .join('\n');

/** The OpenAPI 3.1 document, generated from the route schemas and the context's resources, and the browsable reference at /docs. */
export async function registerOpenApi(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config } = ctx;
  const scopes = scopeCatalogue(ctx.resources);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Store Data API',
        version: '2.0.0',
        description:
          'Read access to one store\'s products, categories, brands, product parameter and filter values and orders.\n\n' +
          '**Authentication**: `POST /oauth/token` (client credentials) gives a Bearer token valid for 2 hours.\n\n' +
          '**Listing**: every collection is keyset-paginated (`limit` 1-1000, `cursor`), sortable, filterable, and answers ' +
          'in JSON, CSV or XLSX.\n\n**Errors** are RFC 9457 problems with a stable `code`:\n\n| code | status | meaning |\n|---|---|---|\n' +
          problemList,
      },
      servers: [{ url: config.publicUrl }],
      tags: [
        { name: 'OAuth', description: 'Tokens (RFC 6749 client credentials).' },
        { name: 'Admin', description: 'The back office\'s write door, authenticated with `ADMIN_TOKEN`. Not part of the public /api/v2 interface.' },
        { name: 'Operations', description: 'Health and readiness.' },
      ],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            flows: { clientCredentials: { tokenUrl: `${config.publicUrl}/oauth/token`, scopes: { ...scopes } } },
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the store.' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0 } });
}

export const problemDocs = Object.fromEntries(Object.entries(PROBLEMS).map(([code, p]) => [problemSlug(code as keyof typeof PROBLEMS), { code, ...p }]));
