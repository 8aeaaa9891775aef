import type { GenerateInput, Task } from './engine.ts';
import type { ProductFacts } from './product-context.ts';

/** The character limits of the SEO tasks (what search engines show). */
export const SEO_TITLE_MAX = 60;
export const SEO_DESCRIPTION_MAX = 160;

export interface Messages {
  system: string;
  user: string;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

/** "Czech", "German (Austria)"; the tag itself when Intl does not know it. */
export function languageName(tag: string): string {
  try {
    return languageNames.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

const INSTRUCTIONS: Record<Task, string> = {
  'product-description':
    'Write a product description of 60 to 150 words for the product below: open with a sentence that names the product, ' +
    'then its main features taken from the parameters, then one short closing line. Plain text, no headings, no lists.',
  'seo-title': `Write an SEO title for the product page below, at most ${SEO_TITLE_MAX} characters, that contains the product name. Answer with the title only.`,
  'seo-description': `Write an SEO meta description for the product page below, at most ${SEO_DESCRIPTION_MAX} characters, that names the product and its strongest facts. Answer with the description only.`,
  summary: 'Summarise the product below in one or two sentences.',
  translate: 'Translate the text below. Keep product names, article numbers, numbers and units as they are. Answer with the translation only.',
};

/** The facts block: only what the store knows, one fact a line, so a model has nothing to guess. */
export function describeProduct(p: ProductFacts): string {
  const lines = [`Product: ${p.name}`, `Article number: ${p.articleNumber}`];
  if (p.brand) lines.push(`Brand: ${p.brand.name}`);
  if (p.categoryPath.length) lines.push(`Category: ${p.categoryPath.join(' > ')}`);
  lines.push(`Price: ${p.price} ${p.currency} including ${p.vatRate} % VAT`);
  lines.push(p.stock > 0 ? `In stock: ${p.stock} pieces` : 'Currently out of stock');
  if (p.weight !== null && !p.parameters.some((x) => /^weight$/i.test(x.name))) lines.push(`Weight: ${p.weight} kg`);
  if (p.ean) lines.push(`EAN: ${p.ean}`);
  if (p.parameters.length) {
    lines.push('Parameters:');
    for (const x of p.parameters) lines.push(`- ${x.name}: ${x.value}${x.unit ? ` ${x.unit}` : ''}`);
  }
  if (p.filters.length) {
    lines.push('Properties:');
    for (const x of p.filters) lines.push(`- ${x.name}: ${x.value}`);
  }
  if (p.brand?.description) lines.push(`About the brand: ${p.brand.description}`);
  if (p.description) lines.push(`Current description: ${p.description}`);
  return lines.join('\n');
}

/** The chat messages an LLM engine sends: the task's instruction, the product's facts, the caller's text and prompt. */
export function buildMessages(input: GenerateInput): Messages {
  const language = languageName(input.language ?? 'en');
  // A prompt may name the language when the caller's `language` does not.
  const write = input.language === undefined && input.prompt ? `Write in ${language} unless the instructions ask for another language.` : `Write in ${language}.`;
  const system =
    `You are a copywriter for an online store. ${write} Use only the facts you are given; ` +
    'never invent specifications, prices, awards or claims. Answer with the requested text only, without a preamble or quotes.';
  const parts: string[] = [];
  if (input.task) {
    const instruction = INSTRUCTIONS[input.task];
    parts.push(input.task === 'translate' ? `${instruction} Target language: ${language}.` : instruction);
    if (input.task === 'summary' && input.text && !input.product) parts[0] = 'Summarise the text below in one or two sentences.';
  }
  if (input.prompt) parts.push(input.task ? `Additional instructions: ${input.prompt}` : input.prompt);
  if (input.product) parts.push(describeProduct(input.product));
  if (input.names?.length) parts.push(`Names to keep as they are: ${input.names.join('; ')}`);
  if (input.text) parts.push(`Text:\n${input.text}`);
  return { system, user: parts.join('\n\n') };
}
