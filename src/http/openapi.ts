import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { scopeCatalogue } from '../auth/scopes.ts';
import type { AppContext } from '../context.ts';
import { PROBLEMS, problemSlug } from '../errors/codes.ts';
import { CHANGES_DEFAULT_LIMIT } from '../events/changes.routes.ts';
import { DEFAULT_LIMIT } from '../listing/engine.ts';
import { LOGO_SVG } from './logo.ts';
import { polishDocument, type Document, type Tag } from './openapi-document.ts';

const problemList = Object.entries(PROBLEMS)
  .map(([code, p]) => `| \`${code}\` | ${p.status} | ${p.title}: ${p.description} |`)
  .join('\n');

/**
 * Tags besides the collections' (each collection's tag is described by its declaration), in the document's
 * order: the public API first, the admin API and operations last. A route with a tag not named here or by a
 * collection still gets it defined, without a description: test/http/openapi-lint.test.ts asks for one here.
 */
const TAGS: { public: Tag[]; last: Tag[] } = {
  public: [
    { name: 'OAuth', description: 'Tokens (RFC 6749 client credentials): every /api/v2 call needs a Bearer token from `POST /oauth/token`.' },
    { name: 'Changes', description: 'The changes feed: every create, update and delete of the store, in order, with long-polling; what sync and webhooks are made of.' },
    { name: 'Text generation', description: 'Product texts written by the configured engine (or the built-in one) from the store\'s data.' },
    { name: 'Snapshots', description: 'Point-in-time copies of the collections, to download or to start a replica from.' },
    { name: 'MCP', description: 'The Model Context Protocol endpoint: the store\'s data as tools for AI assistants.' },
    { name: 'Discovery', description: 'Well-known metadata documents (OAuth authorization server, protected resource).' },
  ],
  last: [
    { name: 'Admin', description: 'The back office\'s write door, authenticated with `ADMIN_TOKEN`. Not part of the public /api/v2 interface.' },
    { name: 'Operations', description: 'Health and readiness probes, for load balancers and orchestrators.' },
  ],
};

/** Operation ids named by hand where the derived one (openapi-operation-ids.ts) would read badly. */
const OPERATION_IDS: Record<string, string> = {
  'POST /oauth/token': 'createToken',
  'GET /api/v2/changes': 'listChanges',
  'POST /api/v2/ai/generate': 'generateText',
  'GET /api/v2/ai/engine': 'getTextEngine',
  'GET /admin/api/sync': 'adminGetSyncStatus',
};

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
        contact: { name: 'Store Data API', url: `${config.publicUrl}/` },
        description:
          'Read access to one store\'s products, categories, brands, product parameter and filter values and orders.\n\n' +
          '**Authentication**: `POST /oauth/token` (client credentials) gives a Bearer token valid for 2 hours.\n\n' +
          '**Listing**: every collection is keyset-paginated (`limit` 1-1000, `cursor`), sortable, filterable, and answers ' +
          'in JSON, CSV or XLSX.\n\n**Errors** are RFC 9457 problems with a stable `code`:\n\n| code | status | meaning |\n|---|---|---|\n' +
          problemList,
      },
      servers: [{ url: config.publicUrl }],
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
    // Operation ids, tags and their order, documented defaults and HEADs, examples out of Try-it-out (openapi-document.ts).
    transformObject: (generated) => {
      // Only the OpenAPI form is configured (never the Swagger 2 one).
      if (!('openapiObject' in generated)) return generated.swaggerObject;
      return polishDocument(generated.openapiObject as Document, {
        collections: ctx.resources.list,
        tags: TAGS,
        operationIds: OPERATION_IDS,
        limitDefaults: {
          ...Object.fromEntries(ctx.resources.list.map((r) => [`/api/v2/${r.collection}`, DEFAULT_LIMIT])),
          '/api/v2/changes': CHANGES_DEFAULT_LIMIT,
        },
      }) as typeof generated.openapiObject;
    },
  });
  const logo = Buffer.from(LOGO_SVG);
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0, displayOperationId: false },
    logo: { type: 'image/svg+xml', content: logo, href: '/docs', target: '_self' },
    theme: { title: 'Store Data API', favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: logo }] },
  });
}

export const problemDocs = Object.fromEntries(Object.entries(PROBLEMS).map(([code, p]) => [problemSlug(code as keyof typeof PROBLEMS), { code, ...p }]));
