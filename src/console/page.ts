import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { PageContent } from './layout.ts';

/** What a page module is given: the service's context, and the console's shell to answer in. */
export interface ConsoleDeps {
  ctx: AppContext;
  /** Answers a page in the console's shell (navigation, sign-out, security headers). */
  show(request: FastifyRequest, reply: FastifyReply, content: Omit<PageContent, 'csrf'>, status?: number): FastifyReply;
}

/**
 * One section of the console: its navigation entry and its routes under /admin/<slug>. A new section is one
 * more module in pages.ts; the routes it registers are behind the session and CSRF guard already.
 */
export interface ConsolePage {
  slug: string;
  title: string;
  routes(app: FastifyInstance, deps: ConsoleDeps): void;
}

/** The schema every console route carries: kept out of the public OpenAPI document. */
export const hidden = { hide: true } as const;

export const idParams = { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'integer', minimum: 1 } } };

/** The path parameters of an `{id}` page, as `idParams` has validated (and coerced) them. */
export interface IdParams {
  id: number;
}
