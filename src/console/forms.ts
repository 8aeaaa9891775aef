import type { FastifyRequest } from 'fastify';
import { AppError, type FieldError } from '../errors/app-error.ts';
import { csrfInput } from './csrf.ts';
import { html, type Html } from './html.ts';
import { formToken } from './guard.ts';

/**
 * A POST form carrying the session's CSRF token. With `confirm`, the console's script asks first (and
 * without the script the server asks on a page of its own, see `confirmed`).
 */
export function postForm(request: FastifyRequest, action: string, inner: Html, options: { confirm?: string; className?: string; label?: string } = {}): Html {
  return html`<form method="post" action="${action}"${options.className ? html` class="${options.className}"` : ''}${options.label ? html` aria-label="${options.label}"` : ''}${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>${csrfInput(formToken(request))}${inner}</form>`;
}

/** The field a confirmed form carries: the script adds it after the dialog, the server's own confirmation page has it. */
export const CONFIRM_FIELD = 'confirmed';

export const isConfirmed = (body: unknown): boolean => (body as Record<string, unknown> | undefined)?.[CONFIRM_FIELD] === 'yes';

/** The page that asks for confirmation when the script did not (no JavaScript): the same form again, confirmed. */
export function confirmationBody(request: FastifyRequest, action: string, question: string, button: string, back: string): Html {
  return html`<section class="panel danger-zone" aria-labelledby="confirm-q">
    <h2 id="confirm-q">${question}</h2>
    ${postForm(request, action, html`<input type="hidden" name="${CONFIRM_FIELD}" value="yes"><div class="actions"><button type="submit" class="button danger">${button}</button> <a class="button quiet" href="${back}">Cancel</a></div>`)}
  </section>`;
}

/** A timestamp as a <time> element in UTC, or a dash. */
export function when(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A form field value from a urlencoded body: one string, or the first of repeated ones. */
export function field(body: unknown, name: string): string | undefined {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a repeated form field (checkboxes): urlencoded bodies give one string, or an array for several. */
export function fieldList(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

/** The field errors of a failed service call, when it is the caller's input that was wrong; rethrows anything else. */
export function inputErrors(error: unknown): FieldError[] {
  if (error instanceof AppError && (error.code === 'invalid_body' || error.code === 'conflict')) return error.errors ?? [{ name: '', reason: error.message }];
  throw error;
}

/** An error summary at the top of a form (announced, and naming each field). */
export function errorSummary(errors: FieldError[]): Html {
  if (errors.length === 0) return html``;
  return html`<div class="error-summary" role="alert" tabindex="-1"><h2>Please correct this</h2><ul>${errors.map((e) => html`<li>${e.name ? html`<strong>${e.name}</strong> ` : ''}${e.reason}</li>`)}</ul></div>`;
}

/** A urlencoded form body's schema: the CSRF field, the confirmation flag, and the fields given (strings, or lists of strings). */
export function formBody(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties: { _csrf: { type: 'string', maxLength: 200 }, [CONFIRM_FIELD]: { type: 'string', enum: ['yes'] }, ...properties },
  };
}

/** A checkbox group's schema: one value arrives as a string, several as an array. */
export const oneOrMany = (item: Record<string, unknown>, maxItems: number): Record<string, unknown> => ({ anyOf: [item, { type: 'array', maxItems, items: item }] });
