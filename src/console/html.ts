/**
 * HTML built by a tagged template that escapes every interpolated value, so that nothing a client or the
 * database holds (a credential's name, a webhook's URL, a receiver's answer) can become markup. Only the
 * output of another `html` template passes through unescaped: there is no way to mark a string as safe.
 */
export class Html {
  /** Private by convention: only `html` makes these, from template literals written in this code base. */
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an element's content or a quoted attribute value. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  // null, undefined and false render nothing, so that `${cond && html`…`}` reads naturally.
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}
